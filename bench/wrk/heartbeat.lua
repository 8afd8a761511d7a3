-- Heartbeat (renew) load: PUT /eureka/apps/{APP}/{id}?status=UP&lastDirtyTimestamp=T,
-- cycling over all N pre-registered instances (see common.lua for the naming).
-- Usage: wrk ... -s heartbeat.lua http://127.0.0.1:PORT -- N NAPPS THREADS
local common = dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

setup = common.setup
done = common.done

local reqs, count, pos

function init(args)
  local n, napps, threads = tonumber(args[1]), tonumber(args[2]), tonumber(args[3] or 1)
  reqs, count = {}, n
  for i = 0, n - 1 do
    local path = "/eureka/apps/BENCH-APP-" .. common.app_index(i, napps) .. "/"
      .. common.instance_id(i, napps) .. "?status=UP&lastDirtyTimestamp=" .. common.LAST_DIRTY
    reqs[i + 1] = wrk.format("PUT", path)
  end
  -- Threads start at different points of the cycle.
  pos = math.floor((tid or 0) * n / threads) % n
end

function request()
  pos = pos + 1
  if pos > count then pos = 1 end
  return reqs[pos]
end
