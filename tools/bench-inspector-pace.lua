-- wrk script of tools/bench-inspector: without arguments wrk sends as fast as it can; with
-- `-- RATE THREADS` every thread keeps to RATE/THREADS requests per second on a schedule (each request
-- takes the next slot, waits for it with wrk's delay(), and a thread more than a second behind starts its
-- schedule again instead of bursting). So the rate is held while the server keeps up, and a server that
-- cannot keep up shows it as a lower rate and longer latencies. LuaJIT's FFI reads the monotonic clock:
-- wrk's Lua has no sub-second clock of its own.
local ffi = require("ffi")
ffi.cdef [[
typedef struct { long tv_sec; long tv_nsec; } bench_inspector_timespec;
int clock_gettime(int clock, bench_inspector_timespec *tp);
]]
local CLOCK_MONOTONIC = 1
local now_spec = ffi.new("bench_inspector_timespec")

local function now_ms()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, now_spec)
  return tonumber(now_spec.tv_sec) * 1000 + tonumber(now_spec.tv_nsec) / 1e6
end

local period_ms = nil
local due_ms = nil

local function paced_delay()
  local now = now_ms()
  if not due_ms or due_ms < now - 1000 then
    due_ms = now
  end
  due_ms = due_ms + period_ms
  local wait = due_ms - now
  if wait < 1 then
    return 0
  end
  -- wrk waits whole milliseconds: the fraction left is made up by the following slots.
  return math.floor(wait)
end

-- wrk looks for a global delay() after init(): without a rate there is none, so a run at maximum load goes
-- through no timer per request and is the harness's S1 run exactly.
function init(args)
  local rate, threads = tonumber(args[1]), tonumber(args[2])
  if rate and threads and rate > 0 and threads > 0 then
    period_ms = 1000 * threads / rate
    delay = paced_delay
  end
end

-- One machine-readable line, as the peers harness's report.lua prints it (latencies in microseconds).
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "PEERS_RESULT requests=%d duration_us=%d p50_us=%d p90_us=%d p99_us=%d max_us=%d mean_us=%.1f " ..
    "err_connect=%d err_read=%d err_write=%d err_status=%d err_timeout=%d bytes=%d\n",
    summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    latency.max, latency.mean,
    e.connect, e.read, e.write, e.status, e.timeout, summary.bytes))
end
