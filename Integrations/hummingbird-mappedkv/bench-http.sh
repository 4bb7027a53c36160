#!/usr/bin/env bash
# HTTP round trips through the example app on loopback: a route that reads the persist driver
# (GET /kv/bench) against a route returning a constant of the same length (GET /constant), with wrk
# (Debian: apt-get install -y wrk), alternating the two routes for a few rounds. Prints requests/s
# per run and the ratio of the medians. The app runs pinned to core 0, wrk to core 1.
#
#   Integrations/hummingbird-mappedkv/bench-http.sh [rounds] [seconds]
set -euo pipefail
cd "$(dirname "$0")"
rounds=${1:-5}
seconds=${2:-10}
command -v wrk > /dev/null || { echo "wrk is missing: apt-get install -y wrk" >&2; exit 1; }

nice -n 19 swift build -c release --product HummingbirdMappedKVExample > /dev/null
binary=$(swift build -c release --show-bin-path)/HummingbirdMappedKVExample
directory=$(mktemp -d)
log=$(mktemp)
taskset -c 0 "$binary" --directory "$directory" --hostname 127.0.0.1 --port 0 > "$log" 2>&1 &
app=$!
trap 'kill "$app" 2> /dev/null; wait "$app" 2> /dev/null || true; rm -rf "$directory" "$log"' EXIT

port=""
for _ in $(seq 600); do
    port=$(sed -n 's/^listening on 127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")
    [ -n "$port" ] && break
    kill -0 "$app" 2> /dev/null || { cat "$log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { echo "the app did not start" >&2; cat "$log" >&2; exit 1; }
base="http://127.0.0.1:$port"
export NO_PROXY='*' no_proxy='*'

# The cached value has the constant's bytes, so both responses are the same size.
curl -sf -X PUT --data 'hello, world' "$base/kv/bench" > /dev/null
[ "$(curl -sf "$base/kv/bench")" = "hello, world" ] || { echo "GET /kv/bench does not read the value" >&2; exit 1; }
[ "$(curl -sf "$base/constant")" = "hello, world" ] || { echo "GET /constant is not the same bytes" >&2; exit 1; }

measure() {  # requests/s of one wrk run against $1
    taskset -c 1 wrk -t1 -c16 -d"${seconds}s" --latency "$base$1" | awk '/^Requests\/sec:/ { print $2 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

measure /constant > /dev/null  # warm-up
cache_runs=()
constant_runs=()
for round in $(seq "$rounds"); do
    c=$(measure /constant)
    k=$(measure /kv/bench)
    constant_runs+=("$c")
    cache_runs+=("$k")
    printf 'round %d: GET /constant %s req/s, GET /kv/bench %s req/s\n' "$round" "$c" "$k"
done
constant_median=$(printf '%s\n' "${constant_runs[@]}" | median)
cache_median=$(printf '%s\n' "${cache_runs[@]}" | median)
printf 'median: GET /constant %s req/s, GET /kv/bench %s req/s\n' "$constant_median" "$cache_median"
awk -v c="$constant_median" -v k="$cache_median" \
    'BEGIN { printf "cache route / constant route: %.3f (throughput), target >= 0.90 (within 10%%)\n", k / c }'
