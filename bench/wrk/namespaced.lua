-- Heartbeats and full fetches spread over namespaces (bench/namespaces.py).
-- Usage: wrk ... -s namespaced.lua http://127.0.0.1:PORT -- MODE NS PER NAPPS THREADS
--   MODE heartbeat: PUT {ns}/eureka/apps/BENCH-APP-a/{id}, cycling over PER instances in each of
--                   NS namespaces (ns-0 .. ns-(NS-1)); NS = 0 is the unprefixed default namespace.
--   MODE fetch:     GET {ns}/eureka/apps (JSON, gzip, as Spring asks), cycling over the namespaces.
--   MODE fetch-at:  GET /ns/ns-NS/eureka/apps only: one namespace's document among many.
-- Instance j of a namespace is named as common.lua names instance j (the same ids in each).
local common = dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

setup = common.setup
done = common.done

local mode, ns_count, per, napps, reqs, total, pos

local function prefix(k)
  if ns_count == 0 then return "" end
  return "/ns/ns-" .. k
end

local function build(i)
  local k, j = math.floor(i / per), i % per
  if mode == "fetch-at" then
    return wrk.format("GET", "/ns/ns-" .. ns_count .. "/eureka/apps",
      { ["Accept"] = "application/json", ["Accept-Encoding"] = "gzip" })
  end
  if mode == "fetch" then
    return wrk.format("GET", prefix(k) .. "/eureka/apps",
      { ["Accept"] = "application/json", ["Accept-Encoding"] = "gzip" })
  end
  local path = prefix(k) .. "/eureka/apps/BENCH-APP-" .. common.app_index(j, napps) .. "/"
    .. common.instance_id(j, napps) .. "?status=UP&lastDirtyTimestamp=" .. common.LAST_DIRTY
  return wrk.format("PUT", path)
end

function init(args)
  mode, ns_count, per, napps = args[1], tonumber(args[2]), tonumber(args[3]), tonumber(args[4])
  local threads = tonumber(args[5] or 1)
  local spaces = math.max(ns_count, 1)
  if mode == "fetch" then per = 1 end
  total, reqs = spaces * per, {}
  if mode == "fetch-at" then total = 1 end
  pos = math.floor((tid or 0) * total / threads) % total
end

function request()
  pos = pos + 1
  if pos > total then pos = 1 end
  local req = reqs[pos]
  if not req then
    req = build(pos - 1)
    reqs[pos] = req
  end
  return req
end
