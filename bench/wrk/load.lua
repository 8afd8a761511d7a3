-- Loader (setup, not a measurement): registers instances 0 .. N-1 (common.lua's naming) exactly
-- once each. Thread t registers its own contiguous range of ids over its one connection, one
-- request at a time, and stops when every answer for its range is in; it then prints
-- "@@LOADED tid answers unexpected first_unexpected_status" (flushed), and run.py interrupts
-- wrk once every thread has said so (wrk itself would wait out -d).
-- Run with -c equal to -t: with more connections per thread, a thread could not tell when the
-- last answer for its range is in.
-- Usage: wrk -tT -cT -dLIMIT -s load.lua http://127.0.0.1:PORT -- N NAPPS T EXPECT_STATUS LEASE_S
local common = dofile(debug.getinfo(1, "S").source:match("^@(.*/)") .. "common.lua")

setup = common.setup

local napps, expect, lease, lo, hi, nxt, got, bad, first_bad
local headers = { ["Content-Type"] = "application/json" }

local function register(i)
  local a = common.app_index(i, napps)
  return wrk.format("POST", "/eureka/apps/BENCH-APP-" .. a, headers,
    common.register_body(common.instance_id(i, napps), a, common.ip(i), lease))
end

function init(args)
  local n, threads = tonumber(args[1]), tonumber(args[3])
  napps, expect, lease = tonumber(args[2]), tonumber(args[4]), tonumber(args[5])
  lo = math.floor(tid * n / threads)
  hi = math.floor((tid + 1) * n / threads)
  nxt, got, bad = lo, 0, 0
end

function request()
  local i = nxt
  if i < hi then
    nxt = nxt + 1
  else
    -- Only reached if wrk asks again after this thread stopped: a re-registration of an id of
    -- this range changes nothing (the registry holds it already).
    i = lo
  end
  return register(i)
end

function response(status)
  got = got + 1
  if status ~= expect then
    bad = bad + 1
    first_bad = first_bad or status
  end
  if got == hi - lo then
    io.write(string.format("@@LOADED %d %d %d %d\n", tid, got, bad, first_bad or 0))
    io.flush()
    wrk.thread:stop()
  end
end
