#!/usr/bin/env bash
# The server bench (docs/bench/server.md): the same Vapor app and routes (Sources/ServerBench) with
# only the cache provider changed, under wrk on loopback, with 1 and 4 app processes; the counter
# route checked for lost updates; and a loopback Redis (redis-benchmark) beside `mappedkv bench`'s
# multi-process get and set. Installs what is missing with apt-get (wrk, postgresql, redis-server),
# starts a throwaway PostgreSQL cluster and a redis-server on loopback, stops everything it started
# on exit, and prints the tables in markdown at the end.
#
#     tools/server-bench/run.sh                 # everything, about 10 minutes once built
#
# Knobs (environment): DURATION (s per wrk run, 10), WARMUP (s, 3), THREADS (wrk threads, 4),
# CONNECTIONS (64), KEYS (keys the read route reads, 1000), COUNTER_REQUESTS (2000),
# COUNTER_PARALLEL (32), PROVIDERS ("mappedkv memory fluent-sqlite fluent-postgres"),
# PROCESS_COUNTS ("1 4"), PG_SYNCHRONOUS_COMMIT (PostgreSQL's synchronous_commit, "on" as it ships),
# REDIS_REQUESTS (200000), BASE_PORT (18080), PG_PORT (55432), REDIS_PORT (56379),
# SKIP_BUILD=1 (use the binaries already built), OPERATION_LEVEL=0 (skip Redis and mappedkv bench),
# OUT (a directory to keep the raw results in).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-3}
THREADS=${THREADS:-4}
CONNECTIONS=${CONNECTIONS:-64}
KEYS=${KEYS:-1000}
COUNTER_REQUESTS=${COUNTER_REQUESTS:-2000}
COUNTER_PARALLEL=${COUNTER_PARALLEL:-32}
PROVIDERS=${PROVIDERS:-"mappedkv memory fluent-sqlite fluent-postgres"}
PROCESS_COUNTS=${PROCESS_COUNTS:-"1 4"}
PG_SYNCHRONOUS_COMMIT=${PG_SYNCHRONOUS_COMMIT:-on}
REDIS_REQUESTS=${REDIS_REQUESTS:-200000}
BASE_PORT=${BASE_PORT:-18080}
PG_PORT=${PG_PORT:-55432}
REDIS_PORT=${REDIS_PORT:-56379}

say() { echo "== $*" >&2; }

# --- what is missing, from Debian's packages -------------------------------------------------------
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v curl >/dev/null || missing+=(curl)
{ command -v redis-server && command -v redis-benchmark && command -v redis-cli; } >/dev/null || missing+=(redis-server redis-tools)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
fi
PG_BIN=$(dirname "$(ls /usr/lib/postgresql/*/bin/initdb | sort -V | tail -n 1)")

# --- the builds -------------------------------------------------------------------------------------
if [ -z "${SKIP_BUILD:-}" ]; then
    say "building the bench app (release; Vapor, Fluent and its drivers take minutes the first time)"
    nice -n 19 swift build -c release --package-path "$HERE" --product ServerBench >&2
    say "building mappedkv (release, .build-release at the repository's root)"
    (cd "$ROOT" && nice -n 19 swift build -c release --scratch-path .build-release --product mappedkv >&2)
fi
APP="$(swift build -c release --package-path "$HERE" --show-bin-path)/ServerBench"
MAPPEDKV="$(cd "$ROOT" && swift build -c release --scratch-path .build-release --show-bin-path)/mappedkv"
[ -x "$APP" ] && [ -x "$MAPPEDKV" ] || { echo "missing $APP or $MAPPEDKV" >&2; exit 1; }

# --- the servers this script starts, and their stop on exit -----------------------------------------
WORK=$(mktemp -d /tmp/server-bench.XXXXXX)
chmod 755 "$WORK"
OUT=${OUT:-$WORK/out}
mkdir -p "$OUT"
APP_PIDS=()
REDIS_PID=""
PG_DATA="$WORK/pg"
PG_STARTED=""
as_postgres() {  # PostgreSQL refuses to run as root
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
stop_apps() {
    local pid
    for pid in "${APP_PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${APP_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    APP_PIDS=()
}
cleanup() {
    stop_apps
    if [ -n "$REDIS_PID" ]; then kill "$REDIS_PID" 2>/dev/null || true; wait "$REDIS_PID" 2>/dev/null || true; fi
    if [ -n "$PG_STARTED" ]; then as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -m fast -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$WORK/pg" "$WORK"/data-*
}
trap cleanup EXIT
trap 'exit 130' INT TERM

case " $PROVIDERS " in
*" fluent-postgres "*)
    say "starting PostgreSQL ($PG_BIN) on 127.0.0.1:$PG_PORT, synchronous_commit=$PG_SYNCHRONOUS_COMMIT"
    mkdir -p "$PG_DATA"
    [ "$(id -u)" -eq 0 ] && chown postgres "$PG_DATA"
    as_postgres "$PG_BIN/initdb" -D "$PG_DATA" -U bench --auth=trust -E UTF8 >"$WORK/initdb.log"
    as_postgres "$PG_BIN/pg_ctl" -D "$PG_DATA" -l "$PG_DATA/server.log" -w \
        -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DATA -c synchronous_commit=$PG_SYNCHRONOUS_COMMIT" \
        start >/dev/null
    PG_STARTED=1
    ;;
esac
PG_URL="postgres://bench@127.0.0.1:$PG_PORT/bench?tlsmode=disable"
pg() { "$PG_BIN/$1" -h 127.0.0.1 -p "$PG_PORT" -U bench "${@:2}"; }

# --- the app processes --------------------------------------------------------------------------------
ports_of() {  # the ports of N processes, comma-separated
    local n=$1 i ports=""
    for i in $(seq 0 $((n - 1))); do ports="$ports${ports:+,}$((BASE_PORT + i))"; done
    echo "$ports"
}
fresh_storage() {  # provider: empty storage, its table made by `migrate` when Fluent's
    local provider=$1
    DATA="$WORK/data-$provider"
    rm -rf "$DATA"
    mkdir -p "$DATA"
    case $provider in
    fluent-postgres)
        pg dropdb --if-exists bench
        pg createdb bench
        ;;
    esac
    case $provider in
    fluent-*)
        LOG_LEVEL=error "$APP" migrate --yes --provider "$provider" --dir "$DATA" --postgres-url "$PG_URL" \
            >"$WORK/migrate.log" 2>&1 || { cat "$WORK/migrate.log" >&2; exit 1; }
        ;;
    esac
}
start_apps() {  # provider, process count
    local provider=$1 n=$2 i port
    for i in $(seq 0 $((n - 1))); do
        port=$((BASE_PORT + i))
        LOG_LEVEL=critical "$APP" serve --provider "$provider" --dir "$DATA" --postgres-url "$PG_URL" \
            --env production --hostname 127.0.0.1 --port "$port" >"$WORK/app-$i.log" 2>&1 &
        APP_PIDS+=($!)
    done
    for i in $(seq 0 $((n - 1))); do
        port=$((BASE_PORT + i))
        for _ in $(seq 1 300); do
            curl -sf "http://127.0.0.1:$port/count/probe" >/dev/null 2>&1 && break
            sleep 0.1
        done
        curl -sf "http://127.0.0.1:$port/count/probe" >/dev/null || {
            echo "app $i ($provider) did not start:" >&2
            cat "$WORK/app-$i.log" >&2
            exit 1
        }
    done
}

# curl in parallel: method, then one URL per line on standard input; prints one status code a line.
curl_many() {
    local method=$1 config="$WORK/curl.config"
    sed 's/.*/url = "&"\noutput = "\/dev\/null"/' >"$config"
    curl -s -Z --parallel-max "$COUNTER_PARALLEL" -X "$method" -w '%{http_code}\n' -K "$config" 2>/dev/null || true
}

# One wrk run: mode (read|write), ports, seconds. Prints "rps p50_us p99_us requests non2xx errors".
wrk_run() {
    local mode=$1 ports=$2 seconds=$3
    MODE=$mode PORTS=$ports KEYS=$KEYS wrk -t"$THREADS" -c"$CONNECTIONS" -d"${seconds}s" \
        -s "$HERE/wrk.lua" "http://127.0.0.1:${ports%%,*}" | awk '/^WRK / {print $2, $3, $4, $5, $6, $7}'
}

START_LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
RESULTS="$OUT/results.tsv"  # provider processes route rps p50 p99 requests non2xx errors
COUNTERS="$OUT/counters.tsv"  # provider processes route sent ok final lost other-statuses
: >"$RESULTS"
: >"$COUNTERS"

counter_check() {  # provider, processes, ports, route
    local provider=$1 n=$2 ports=$3 route=$4 key="c-$RANDOM" i codes ok final others
    local -a plist
    IFS=, read -ra plist <<<"$ports"
    codes=$(for i in $(seq 0 $((COUNTER_REQUESTS - 1))); do
        echo "http://127.0.0.1:${plist[$((i % ${#plist[@]}))]}/$route/$key"
    done | curl_many POST)
    ok=$(grep -c '^200$' <<<"$codes" || true)
    final=$(curl -sf "http://127.0.0.1:${plist[0]}/count/$key")
    others=$({ grep -v '^200$' <<<"$codes" || true; } | sort | uniq -c | awk '{printf "%s%s x %s", (NR > 1 ? ", " : ""), $1, $2}')
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$provider" "$n" "$route" "$COUNTER_REQUESTS" "$ok" "$final" \
        "$((ok - final))" "${others:-none}" >>"$COUNTERS"
    say "$provider x$n /$route: $COUNTER_REQUESTS sent, $ok answered 200 (others: ${others:-none}), final value $final, lost $((ok - final))"
}

for provider in $PROVIDERS; do
    for n in $PROCESS_COUNTS; do
        if [ "$provider" = memory ] && [ "$n" -gt 1 ]; then continue; fi  # each process has its own memory
        ports=$(ports_of "$n")
        say "$provider with $n process(es) on $ports"
        fresh_storage "$provider"
        start_apps "$provider" "$n"
        # The keys the read route reads, written through the app (through one process: the storage is
        # shared, except the memory cache's, which runs in one process only).
        codes=$(for i in $(seq 1 "$KEYS"); do echo "http://127.0.0.1:$BASE_PORT/cache/k$i"; done | curl_many POST)
        [ "$(grep -c '^200$' <<<"$codes")" -eq "$KEYS" ] || { echo "prefill failed: $(sort <<<"$codes" | uniq -c)" >&2; exit 1; }
        wrk_run read "$ports" "$WARMUP" >/dev/null
        for route in read write; do
            line=$(wrk_run "$route" "$ports" "$DURATION")
            printf '%s\t%s\t%s\t%s\n' "$provider" "$n" "$route" "$(tr ' ' '\t' <<<"$line")" >>"$RESULTS"
            say "$provider x$n $route: $line (rps p50_us p99_us requests non2xx errors)"
        done
        counter_check "$provider" "$n" "$ports" count
        [ "$provider" = mappedkv ] && counter_check "$provider" "$n" "$ports" count-atomic
        stop_apps
    done
done

# --- Redis on loopback against mappedkv bench, at the operation level -------------------------------
REDIS_OUT="$OUT/redis.tsv"  # what clients op ops_per_s p50_us p99_us
: >"$REDIS_OUT"
if [ "${OPERATION_LEVEL:-1}" = 1 ]; then
say "starting redis-server on 127.0.0.1:$REDIS_PORT (no persistence)"
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no --daemonize no \
    --logfile "$WORK/redis.log" &
REDIS_PID=$!
for _ in $(seq 1 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
for clients in 1 50; do
    # --csv: "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
    redis-benchmark -h 127.0.0.1 -p "$REDIS_PORT" -t set,get -n "$REDIS_REQUESTS" -c "$clients" -d 12 \
        -r 100000 --csv | tr -d '"' | awk -F, -v c="$clients" '$1 == "SET" || $1 == "GET" {
            printf "redis\t%s\t%s\t%.0f\t%.0f\t%.0f\n", c, tolower($1), $2, $5 * 1000, $7 * 1000 }' >>"$REDIS_OUT"
done
kill "$REDIS_PID"; wait "$REDIS_PID" 2>/dev/null || true; REDIS_PID=""
for lock in flock shared-memory; do
    rm -rf "$WORK/mkv"; mkdir -p "$WORK/mkv"
    "$MAPPEDKV" bench --root "$WORK/mkv" --n 100000 --multi-process --lock "$lock" >"$OUT/mappedkv-bench-$lock.txt"
    awk -F'\t' -v lock="$lock" '$1 == "set_string" || $1 == "get_string" {
        op = ($1 == "set_string") ? "set" : "get"
        printf "mappedkv (--multi-process --lock %s)\t1\t%s\t%.0f\t\t\n", lock, op, 1e9 / $2 }' \
        "$OUT/mappedkv-bench-$lock.txt" >>"$REDIS_OUT"
done
fi

# --- the tables ---------------------------------------------------------------------------------------
echo "## The run"
echo
echo "- $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average (1, 5, 15 min) at the start $START_LOAD, at the end $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- $(swift --version 2>/dev/null | head -n 1)"
echo "- $(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2), $("$PG_BIN/postgres" --version), $(redis-server --version | cut -d' ' -f1-3), $(curl --version | head -n 1 | cut -d' ' -f1-2)"
echo "- packages: $(grep -E '"(identity|version)"' "$HERE/Package.resolved" | paste - - |
    sed -E 's/.*"identity" : "([^"]*)".*"version" : "([^"]*)".*/\1 \2/' |
    grep -E '^(vapor|fluent|fluent-kit|fluent-sqlite-driver|fluent-postgres-driver|sqlite-nio|postgres-nio|swift-nio) ' |
    paste -sd, - | sed 's/,/, /g')"
echo "- the library at $(git -C "$ROOT" rev-parse --short HEAD)"
echo
echo "## HTTP: wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s on loopback"
echo
echo "| provider | processes | route | requests/s | p50 | p99 | requests | non-2xx | socket errors |"
echo "|---|---:|---|---:|---:|---:|---:|---:|---:|"
awk -F'\t' '{
    printf "| %s | %s | %s | %\047.0f | %.2f ms | %.2f ms | %\047d | %\047d | %\047d |\n", $1, $2, ($3 == "read" ? "GET /cache/:key" : "POST /cache/:key"), $4, $5 / 1000, $6 / 1000, $7, $8, $9
}' "$RESULTS"
echo
echo "## MappedKV's requests per second over the others' (same run)"
echo
echo "| route | processes | over memory | over fluent-sqlite | over fluent-postgres |"
echo "|---|---:|---:|---:|---:|"
awk -F'\t' '{ rate[$1 "\t" $2 "\t" $3] = $4; seen[$2 "\t" $3] = 1 }
END {
    for (route = 0; route < 2; route++) {
        r = route == 0 ? "read" : "write"
        for (n = 1; n <= 64; n++) {
            if (!((n "\t" r) in seen) || !(("mappedkv\t" n "\t" r) in rate)) continue
            ours = rate["mappedkv\t" n "\t" r]
            line = sprintf("| %s | %d |", (r == "read" ? "GET /cache/:key" : "POST /cache/:key"), n)
            split("memory fluent-sqlite fluent-postgres", others, " ")
            for (i = 1; i <= 3; i++) {
                key = others[i] "\t" n "\t" r
                line = line ((key in rate) && rate[key] > 0 ? sprintf(" %.2fx |", ours / rate[key]) : " |")
            }
            print line
        }
    }
}' "$RESULTS"
echo
echo "## Counter: $COUNTER_REQUESTS POSTs, $COUNTER_PARALLEL at a time (curl), then the final value"
echo
echo "| provider | processes | route | sent | answered 200 | other answers (count x status) | final value | lost updates |"
echo "|---|---:|---|---:|---:|---|---:|---:|"
awk -F'\t' '{ printf "| %s | %s | POST /%s/:key | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $8, $6, $7 }' "$COUNTERS"
[ "${OPERATION_LEVEL:-1}" = 1 ] || { say "raw results in $OUT"; exit 0; }
echo
echo "## Operation level: redis-benchmark on loopback (-d 12, -r 100000, -n $REDIS_REQUESTS) and mappedkv bench --n 100000"
echo
echo "| store | clients | operation | operations/s | p50 | p99 |"
echo "|---|---:|---|---:|---:|---:|"
awk -F'\t' '{
    p50 = ($5 == "") ? "" : sprintf("%.0f µs", $5); p99 = ($6 == "") ? "" : sprintf("%.0f µs", $6)
    printf "| %s | %s | %s | %\047.0f | %s | %s |\n", $1, $2, $3, $4, p50, p99
}' "$REDIS_OUT"
echo
say "raw results in $OUT"
