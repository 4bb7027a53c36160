#!/usr/bin/env bash
# The HTTP cost of reading the cache: wrk against the example app on loopback, a route that reads a
# note from the MappedKV cache (GET /notes/bench) against a route that returns the same note as a
# constant (GET /constant), alternating ROUNDS times so load from other work falls on both. Prints
# each run's requests/s, then the best and median of each and their ratio (target >= 0.90).
#
#     ./bench-http.sh [rounds] [seconds per run]      # needs wrk: apt-get install -y wrk
#
# APP_CPU and WRK_CPU pin the app and wrk (default: the app on CPU 0, wrk on CPU 1); SCRATCH_PATH
# names the build folder (default .build); APP_BINARY runs a binary built elsewhere instead.
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
    echo "== building the example app in release"
    SCRATCH_PATH=${SCRATCH_PATH:-.build}
    nice -n 19 swift build -c release --scratch-path "$SCRATCH_PATH" --product VaporMappedKVExample
    BIN="$(swift build -c release --scratch-path "$SCRATCH_PATH" --show-bin-path)/VaporMappedKVExample"
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
NOTE='{"text":"a note of about the size of a small cached response"}'
curl -sf -X PUT -H 'Content-Type: application/json' -d "$NOTE" "$BASE/notes/bench" >/dev/null
[ "$(curl -sf "$BASE/notes/bench")" = "$(curl -sf "$BASE/constant")" ] || { echo "the routes differ"; exit 1; }
echo "== app on $BASE (CPU $APP_CPU), wrk -t1 -c16 -d${SECONDS_PER_RUN}s (CPU $WRK_CPU), $ROUNDS rounds"

run() {  # prints the requests/s of one wrk run against $1
    taskset -c "$WRK_CPU" wrk -t1 -c16 -d"${SECONDS_PER_RUN}s" "$BASE$1" | awk '/Requests\/sec/ {print $2}'
}
CACHE=()
CONSTANT=()
for round in $(seq 1 "$ROUNDS"); do
    c=$(run /constant)
    r=$(run /notes/bench)
    CONSTANT+=("$c")
    CACHE+=("$r")
    echo "round $round: constant $c req/s, cache $r req/s"
done

python3 - "${CONSTANT[*]}" "${CACHE[*]}" <<'PY'
import statistics, sys
constant = [float(x) for x in sys.argv[1].split()]
cache = [float(x) for x in sys.argv[2].split()]
print(f"constant route: best {max(constant):.0f} req/s, median {statistics.median(constant):.0f}")
print(f"cache route:    best {max(cache):.0f} req/s, median {statistics.median(cache):.0f}")
print(f"ratio cache / constant: best {max(cache) / max(constant):.3f}, "
      f"median {statistics.median(cache) / statistics.median(constant):.3f} (target >= 0.90)")
PY
