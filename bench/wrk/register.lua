-- Registration load: POST /eureka/apps/{APP} with a Spring-client-shaped JSON body and an
-- instance id never used before in this run (ids "reg<RUN>t<tid>-<k>:bench-app-A:8080").
-- With REUSE_N, it instead re-registers the N pre-loaded instances in turn (same code path, but
-- the registry does not grow): run.py warms servers up this way, with LEASE_S the loaded
-- instances' lease (default 90 s, Spring's), so that the warm-up does not shorten it.
-- Usage: wrk ... -s register.lua http://127.0.0.1:PORT -- NAPPS RUN_TAG [REUSE_N [LEASE_S]]
local common = dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

setup = common.setup
done = common.done

local napps, prefix, k, reuse, reuse_lease
local headers = { ["Content-Type"] = "application/json" }

function init(args)
  napps = tonumber(args[1])
  prefix = "reg" .. (args[2] or "0") .. "t" .. (tid or 0) .. "-"
  reuse = tonumber(args[3] or "")
  reuse_lease = tonumber(args[4] or "")
  k = 0
  if reuse then k = ((tid or 0) * 7919) % reuse end
end

function request()
  k = k + 1
  if reuse then
    local i = k % reuse
    local a = common.app_index(i, napps)
    return wrk.format("POST", "/eureka/apps/BENCH-APP-" .. a, headers,
      common.register_body(common.instance_id(i, napps), a, common.ip(i), reuse_lease))
  end
  local a = k % napps
  local ip = common.ip(k)
  local id = prefix .. k .. ":bench-app-" .. a .. ":8080"
  return wrk.format("POST", "/eureka/apps/BENCH-APP-" .. a, headers, common.register_body(id, a, ip))
end
