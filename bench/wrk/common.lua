-- Shared by the bench/wrk scripts (loaded with dofile; wrk gives every thread its own Lua state).
--
-- Instance naming, identical to bench/run.py (keep the two in sync):
--   instance i (0 <= i < N) belongs to app  BENCH-APP-(i % napps)   (vipAddress bench-app-(i % napps))
--   its IP is 10.(i/65536 % 256).(i/256 % 256).(i % 256), its instanceId is IP:bench-app-(i % napps):8080
--   every body carries lastDirtyTimestamp = LAST_DIRTY, so heartbeats sending it get a plain 200.
local M = {}

M.LAST_DIRTY = "1714550399000"

function M.ip(i)
  return string.format("10.%d.%d.%d", math.floor(i / 65536) % 256, math.floor(i / 256) % 256, i % 256)
end

function M.app_index(i, napps) return i % napps end

function M.instance_id(i, napps)
  return M.ip(i) .. ":bench-app-" .. M.app_index(i, napps) .. ":8080"
end

-- A register body as a Spring Cloud client (RestTemplate/RestClient, Jackson bean shape) sends it.
-- lease: durationInSecs (default 90, Spring's).
function M.register_body(id, app_index, ip, lease)
  local vip = "bench-app-" .. app_index
  local app = "BENCH-APP-" .. app_index
  return '{"instance":{"instanceId":"' .. id .. '","app":"' .. app .. '","appGroupName":null,'
    .. '"ipAddr":"' .. ip .. '","sid":"na","homePageUrl":"http://' .. ip .. ':8080/",'
    .. '"statusPageUrl":"http://' .. ip .. ':8080/actuator/info",'
    .. '"healthCheckUrl":"http://' .. ip .. ':8080/actuator/health","secureHealthCheckUrl":null,'
    .. '"vipAddress":"' .. vip .. '","secureVipAddress":"' .. vip .. '","countryId":1,'
    .. '"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"},'
    .. '"hostName":"' .. ip .. '","status":"UP","overriddenStatus":"UNKNOWN",'
    .. '"leaseInfo":{"renewalIntervalInSecs":30,"durationInSecs":' .. (lease or 90) .. ',"registrationTimestamp":0,'
    .. '"lastRenewalTimestamp":0,"evictionTimestamp":0,"serviceUpTimestamp":0},'
    .. '"isCoordinatingDiscoveryServer":false,"lastUpdatedTimestamp":' .. M.LAST_DIRTY .. ','
    .. '"lastDirtyTimestamp":' .. M.LAST_DIRTY .. ',"actionType":null,"asgName":null,'
    .. '"port":{"$":8080,"@enabled":"true"},"securePort":{"$":443,"@enabled":"false"},'
    .. '"metadata":{"management.port":"8080"}}}'
end

-- Gives each wrk thread a number (global `tid` in the thread's own Lua state).
local next_tid = 0
function M.setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
end

-- Prints one machine-readable line that bench/run.py parses. Latencies are in microseconds.
-- errors.status is wrk's count of responses with a status >= 400 ("Non-2xx or 3xx responses").
function M.done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '@@BENCH {"requests":%d,"duration_us":%d,"bytes":%d,'
      .. '"errors":{"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d},'
      .. '"latency_us":{"mean":%.1f,"stdev":%.1f,"max":%d,"p50":%d,"p90":%d,"p99":%d,"p999":%d}}\n',
    summary.requests, summary.duration, summary.bytes,
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency.stdev, latency.max,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency:percentile(99.9)))
end

return M
