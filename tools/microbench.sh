#!/usr/bin/env bash
# Measurements docs/bench/README.md quotes, each a small program built with optimization and run here:
#
#   tools/microbench.sh crc32        # zlib's CRC-32 against CCRC32's folding, 16 B to 1 MiB
#   tools/microbench.sh dictionary   # a bare Dictionary<String, Int> lookup and String hash at 100,000 keys
#   tools/microbench.sh latency      # one dependent load at random in tables of 1 to 64 MiB
#   tools/microbench.sh large-read   # a 1 MiB file read whole, against read with a CRC-32 check
#   tools/microbench.sh coherence    # a Mutex<[String: Int]> hit, and the same after a second Mutex around a stamp check
#   tools/microbench.sh clocks       # one reading of each clock the caches can read, and an uncontended lock and unlock
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
case "${1:-}" in
    crc32)
        cc -O2 -I"$here/../Sources/CCRC32/include" "$here/microbench/crc32.c" "$here/../Sources/CCRC32/crc32_fold.c" \
            -lz -o "$out/crc32"
        "$out/crc32" ;;
    dictionary)
        swiftc -O "$here/microbench/dictionary-floor.swift" -o "$out/dictionary"
        "$out/dictionary" ;;
    latency)
        cc -O2 "$here/microbench/memory-latency.c" -o "$out/latency"
        "$out/latency" ;;
    large-read)
        cc -O2 -I"$here/../Sources/CCRC32/include" "$here/microbench/large-read.c" -o "$out/large-read"
        "$out/large-read" ;;
    coherence)
        swiftc -O "$here/microbench/coherence-floor.swift" -o "$out/coherence"
        "$out/coherence" ;;
    clocks)
        cc -O2 "$here/microbench/clocks.c" -o "$out/clocks"
        "$out/clocks" ;;
    *) echo "usage: $0 crc32|dictionary|latency|large-read|coherence|clocks" >&2; exit 2 ;;
esac
