#!/usr/bin/env bash
# The HTTP cost of reading the cache: wrk against VaporMappedKVHTTPBench on loopback. It serves the
# same small JSON note from five routes: read from the MappedKV cache and returned as a constant, in
# each of Vapor's two handler styles (EventLoopFuture and async), and, in the async style, read from
# Vapor's own in-memory cache. The routes take turns, ROUNDS times, so load from other work falls on
# all of them. Prints each run's requests/s, then each route's best and median and the ratios:
# - the target (>= 0.90): future/mappedkv against future/constant, where the cache's completed
#   future is read on the request's event loop with no thread hop;
# - for reference: async/mappedkv against async/constant, and async/memory against async/constant
#   (what awaiting any Vapor `Cache` future from an async handler costs: a hop to the event loop
#   and back).
#
#     ./bench-http.sh [rounds] [seconds per run]      # needs wrk: apt-get install -y wrk
#
# APP_CPU and WRK_CPU pin the server and wrk (default: the server on CPU 0, wrk on CPU 1);
# SCRATCH_PATH names the build folder (default .build); APP_BINARY runs a binary built elsewhere.
set -euo pipefail
cd "$(dirname "$0")"
ROUNDS=${1:-5}
SECONDS_PER_RUN=${2:-10}
APP_CPU=${APP_CPU:-0}
WRK_CPU=${WRK_CPU:-1}
command -v wrk >/dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }

if [ -n "${APP_BINARY:-}" ]; then
    BIN="$APP_BINARY"
else
    echo "== building the bench server in release"
    SCRATCH_PATH=${SCRATCH_PATH:-.build}
    nice -n 19 swift build -c release --scratch-path "$SCRATCH_PATH" --product VaporMappedKVHTTPBench
    BIN="$(swift build -c release --scratch-path "$SCRATCH_PATH" --show-bin-path)/VaporMappedKVHTTPBench"
fi

WORK=$(mktemp -d)
LOG="$WORK/app.log"
cleanup() {
    if [ -n "${APP_PID:-}" ]; then kill "$APP_PID" 2>/dev/null || true; wait "$APP_PID" 2>/dev/null || true; fi
    rm -rf "$WORK"
}
trap cleanup EXIT

MAPPEDKV_DIRECTORY="$WORK/store" LOG_LEVEL=notice taskset -c "$APP_CPU" \
    "$BIN" serve --env production --hostname 127.0.0.1 --port 0 >"$LOG" 2>&1 &
APP_PID=$!
PORT=""
for _ in $(seq 1 300); do
    PORT=$(sed -n 's/.*Server started on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$LOG" | head -n 1)
    [ -n "$PORT" ] && break
    kill -0 "$APP_PID" 2>/dev/null || { cat "$LOG"; exit 1; }
    sleep 0.1
done
[ -n "$PORT" ] || { echo "the app did not start:"; cat "$LOG"; exit 1; }
BASE="http://127.0.0.1:$PORT"
ROUTES=(future/constant future/mappedkv async/constant async/mappedkv async/memory)
EXPECTED=$(curl -sf "$BASE/future/constant")
for route in "${ROUTES[@]}"; do
    [ "$(curl -sf "$BASE/$route")" = "$EXPECTED" ] || { echo "/$route differs from /future/constant"; exit 1; }
done
echo "== server on $BASE (CPU $APP_CPU), wrk -t1 -c16 -d${SECONDS_PER_RUN}s (CPU $WRK_CPU), $ROUNDS rounds"

run() {  # prints the requests/s of one wrk run against $1
    taskset -c "$WRK_CPU" wrk -t1 -c16 -d"${SECONDS_PER_RUN}s" "$BASE/$1" | awk '/Requests\/sec/ {print $2}'
}
RESULTS="$WORK/results"
for round in $(seq 1 "$ROUNDS"); do
    line="round $round:"
    for route in "${ROUTES[@]}"; do
        r=$(run "$route")
        echo "$round $route $r" >>"$RESULTS"
        line="$line $route $r"
    done
    echo "$line req/s"
done

python3 - "$RESULTS" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    round_, route, rate = line.split()
    runs[route][round_] = float(rate)
for route, rates in runs.items():
    values = list(rates.values())
    print(f"{route:16} best {max(values):7.0f} req/s, median {statistics.median(values):7.0f}")
def ratio(a, b, note):
    paired = [runs[a][r] / runs[b][r] for r in runs[a]]
    print(f"{a} / {b}: median of rounds {statistics.median(paired):.3f}, "
          f"ratio of medians {statistics.median(runs[a].values()) / statistics.median(runs[b].values()):.3f}{note}")
ratio("future/mappedkv", "future/constant", " (target >= 0.90)")
ratio("async/mappedkv", "async/constant", "")
ratio("async/memory", "async/constant", "")
ratio("async/mappedkv", "async/memory", "")
PY
