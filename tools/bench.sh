#!/usr/bin/env bash
# Builds tools/bench (MappedKV against SQLite, LMDB and UserDefaults; MappedKVCache against other
# disk cache designs) in release with its own scratch path, installing the C libraries it links when
# they are missing, then runs it with the arguments given:
#
#   tools/bench.sh --n 100000 --runs 5 --svg peers.svg     # the peer comparison
#   tools/bench.sh --scaling --svg scaling.svg              # MappedKV at N = 10^4, 10^5, 10^6
#   tools/bench.sh --cache --runs 5 --svg cache.svg         # DiskCache, MemoryCache and Cache against SQLite +
#                                                           # files, file per entry, plain files and the
#                                                           # baselines of their targets
#   tools/bench.sh --collections --runs 3                  # MappedKVCollections against its SQLite design,
#                                                           # then the delivery of Bucket.changes()
#   tools/bench.sh --collections-changes                    # the delivery of Bucket.changes() alone
#   tools/bench.sh --help
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"

# The C libraries: LMDB and SQLite for the peers, OpenSSL and zlib for MappedKV itself.
if command -v dpkg >/dev/null 2>&1; then
    missing=()
    for pkg in liblmdb-dev libsqlite3-dev libssl-dev zlib1g-dev pkg-config; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    if [ ${#missing[@]} -gt 0 ]; then
        echo "installing: ${missing[*]}" >&2
        SUDO=""
        [ "$(id -u)" -ne 0 ] && SUDO="sudo"
        $SUDO apt-get update -qq >&2
        DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
    fi
else
    echo "no dpkg: install the LMDB, SQLite 3, OpenSSL and zlib development files yourself" >&2
fi

# Its own scratch path (ignored by git, like every .build*/), so it never touches the main package's build.
scratch="$here/bench/.build"
swift build -c release --package-path "$here/bench" --scratch-path "$scratch" --product mappedkv-peers >&2
# The binary cannot know which compiler built it; the report quotes this line.
MAPPEDKV_BENCH_SWIFT_VERSION="$(swift --version 2>/dev/null | head -n 1)"
export MAPPEDKV_BENCH_SWIFT_VERSION
exec "$scratch/release/mappedkv-peers" "$@"
