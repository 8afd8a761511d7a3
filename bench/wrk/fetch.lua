-- Registry fetch load, as a Java/Spring client sends it: JSON, gzip. The path (/eureka/apps or
-- /eureka/apps/delta) comes from the URL on wrk's command line.
local common = dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

done = common.done

wrk.method = "GET"
wrk.headers["Accept"] = "application/json"
wrk.headers["Accept-Encoding"] = "gzip"
