-- Heartbeat (renew) load: PUT /eureka/apps/{APP}/{id}?status=UP&lastDirtyTimestamp=T,
-- cycling over all N pre-registered instances (see common.lua for the naming).
-- Usage: wrk ... -s heartbeat.lua http://127.0.0.1:PORT -- N NAPPS THREADS
local common = dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

setup = common.setup
done = common.done

local reqs, count, pos, napps

-- A request is built the first time the cycle reaches its id and kept for the next rounds of the
-- cycle: building all N up front would take each thread seconds (and hundreds of MB) at 1,000,000.
local function build(i)
  local path = "/eureka/apps/BENCH-APP-" .. common.app_index(i, napps) .. "/"
    .. common.instance_id(i, napps) .. "?status=UP&lastDirtyTimestamp=" .. common.LAST_DIRTY
  return wrk.format("PUT", path)
end

function init(args)
  local n, threads = tonumber(args[1]), tonumber(args[3] or 1)
  napps = tonumber(args[2])
  reqs, count = {}, n
  -- Threads start at different points of the cycle.
  pos = math.floor((tid or 0) * n / threads) % n
end

function request()
  pos = pos + 1
  if pos > count then pos = 1 end
  local req = reqs[pos]
  if not req then
    req = build(pos - 1)
    reqs[pos] = req
  end
  return req
end
