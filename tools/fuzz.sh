#!/usr/bin/env bash
# Fuzzes MappedKV's load, recovery and inspection paths with libFuzzer and AddressSanitizer.
#
#   tools/fuzz.sh [SECONDS]      build the fuzzer, then fuzz for SECONDS (default 60)
#   tools/fuzz.sh --make-seeds   build, then rewrite tools/fuzz/corpus-seed/ from Vectors/
#
# The fuzz target is the package's executable mappedkv-fuzz (Sources/mappedkv-fuzz), which a plain
# build compiles as a replayer of inputs. Here it is built in release mode with debug info, with
# -D FUZZING and -sanitize=fuzzer,address, into its own scratch path .build-fuzz/. The working
# corpus tools/fuzz/corpus/ starts from the committed seeds in tools/fuzz/corpus-seed/ and keeps
# growing across runs; crash, timeout and leak inputs go to tools/fuzz/artifacts/, the libFuzzer
# output to tools/fuzz/logs/ (or $FUZZ_LOG). None of these are in git.
#
# Prints the executions, exec/s, coverage and whether anything crashed; exits 1 if something did.
# Extra libFuzzer flags can be passed in $FUZZ_FLAGS (e.g. FUZZ_FLAGS="-seed=1 -jobs=2").
set -euo pipefail

cd "$(dirname "$0")/.."
fuzz=tools/fuzz
scratch=.build-fuzz
seeds="$fuzz/corpus-seed"
corpus="$fuzz/corpus"
artifacts="$fuzz/artifacts"
logs="$fuzz/logs"

mode=fuzz
seconds=60
case "${1:-}" in
    "") ;;
    --make-seeds) mode=seeds ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *)
        if [[ "$1" =~ ^[0-9]+$ ]] && [ "$1" -gt 0 ]; then seconds="$1"
        else echo "usage: $0 [SECONDS] | --make-seeds" >&2; exit 2; fi ;;
esac

build_flags=(-c release --scratch-path "$scratch" --product mappedkv-fuzz
             -Xswiftc -g -Xswiftc -DFUZZING -Xswiftc -sanitize=fuzzer,address)
mkdir -p "$scratch"
echo "building mappedkv-fuzz (release, -D FUZZING, -sanitize=fuzzer,address) in $scratch..."
if ! swift build "${build_flags[@]}" >"$scratch/build.log" 2>&1; then
    # gold warns about every ASan check symbol; the errors are what matters.
    grep -v "Cannot export local symbol" "$scratch/build.log" | tail -40 >&2
    echo "build failed (full log: $scratch/build.log)" >&2
    exit 1
fi
binary="$(swift build "${build_flags[@]}" --show-bin-path)/mappedkv-fuzz"

# No Swift backtracer (it outlives the crashing process and slows every crash down): the
# sanitizer prints the stack, also for Swift traps (SIGILL) and aborts.
export SWIFT_BACKTRACE=enable=no
export ASAN_OPTIONS="${ASAN_OPTIONS:-handle_sigill=1:handle_abort=1:detect_leaks=1:symbolize=1}"

if [ "$mode" = seeds ]; then
    # The checkpoint-* seeds are files a MappedKV writer made, not vectors: they are kept.
    find "$seeds" -type f ! -name 'checkpoint-*' -delete 2>/dev/null || true
    "$binary" --make-seeds Vectors "$seeds"
    exit 0
fi

mkdir -p "$corpus" "$artifacts" "$logs"
cp -n "$seeds"/* "$corpus"/ 2>/dev/null || true
log="${FUZZ_LOG:-$logs/fuzz-$(date -u +%Y%m%dT%H%M%SZ).log}"
mkdir -p "$(dirname "$log")"
before="$(ls "$artifacts" | wc -l)"

echo "fuzzing for ${seconds}s: corpus $corpus ($(ls "$corpus" | wc -l) inputs), log $log"
status=0
# shellcheck disable=SC2086  # FUZZ_FLAGS is a list of flags
"$binary" -max_total_time="$seconds" -timeout=10 -max_len=8192 -print_final_stats=1 -dict="$fuzz/mappedkv.dict" \
    -artifact_prefix="$artifacts/" ${FUZZ_FLAGS:-} "$corpus" >"$log" 2>&1 || status=$?

last="$(grep -E '^#[0-9]+' "$log" | tail -1 || true)"
executions="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)"
new_artifacts="$(ls -t "$artifacts" | head -n $(( $(ls "$artifacts" | wc -l) - before )))"
echo "executions: ${executions:-unknown}  exec/s: ${rate:-unknown}"
echo "last status: ${last:-none}"
echo "corpus: $(ls "$corpus" | wc -l) inputs"
if [ "$status" -ne 0 ] || [ -n "$new_artifacts" ]; then
    echo "CRASH: libFuzzer exited with status $status"
    # The report and its stack from the log, which CI does not keep.
    awk '/MAPPEDKV-FUZZ|==[0-9]+==( ERROR|ERROR)|^ERROR: libFuzzer/ { on = 1 } on && shown++ < 60' "$log"
    # The input itself too, so that a CI log alone is enough to reproduce the finding.
    for name in $new_artifacts; do
        echo "  artifact: $artifacts/$name (base64: $(base64 -w0 "$artifacts/$name"))"
    done
    echo "full log: $log"
    exit 1
fi
echo "no crashes"
