-- Registry fetch load. The path (/eureka/apps or /eureka/apps/delta) comes from the URL on wrk's
-- command line; the arguments after "--" say how to ask: FORMAT (json, the default, or xml) and
-- ENCODING (gzip, the default, as a Java/Spring client asks, or plain).
local common = dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

done = common.done

local req

function init(args)
  local format, encoding = args[1] or "json", args[2] or "gzip"
  local headers = { ["Accept"] = "application/" .. format }
  if encoding == "gzip" then
    headers["Accept-Encoding"] = "gzip"
  end
  req = wrk.format("GET", nil, headers)
end

function request()
  return req
end
