-- wrk script of the server bench (run.sh). Environment: MODE (read: GET /cache/k<random 1..KEYS>;
-- write: POST /cache/w<thread>-<n>, a new key every request; overwrite, not used by run.sh since
-- Fluent's cache cannot overwrite: POST /cache/k<random 1..KEYS>), KEYS, PORTS (comma-separated).
-- Thread i connects to port i mod #PORTS, so with -t4 and 4 ports each app process gets one thread
-- and its connections; with one port every thread uses it. done() prints one line:
-- WRK rps p50_us p99_us requests non2xx socket_errors
local ports = {}
for port in string.gmatch(os.getenv("PORTS") or "8080", "%d+") do ports[#ports + 1] = port end
local started = 0

function setup(thread)
    started = started + 1
    local port = ports[((started - 1) % #ports) + 1]
    thread.addr = wrk.lookup("127.0.0.1", port)[1]
    thread:set("id", started)
end

local mode, keys, sent

function init(args)
    mode = os.getenv("MODE") or "read"
    keys = tonumber(os.getenv("KEYS") or "1000")
    sent = 0
    math.randomseed(id * 7919)
end

function request()
    sent = sent + 1
    if mode == "write" then
        return wrk.format("POST", "/cache/w" .. id .. "-" .. sent)
    elseif mode == "overwrite" then
        return wrk.format("POST", "/cache/k" .. math.random(1, keys))
    end
    return wrk.format("GET", "/cache/k" .. math.random(1, keys))
end

function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("WRK %.1f %d %d %d %d %d\n",
        summary.requests / (summary.duration / 1e6),
        latency:percentile(50), latency:percentile(99),
        summary.requests, e.status, e.connect + e.read + e.write + e.timeout))
end
