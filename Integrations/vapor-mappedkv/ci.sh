#!/usr/bin/env bash
# CI for the Vapor integration, from a fresh clone: lint the package's Swift files with the repo's
# .swift-format, copy Vapor's own cache and session tests from the checkout the package resolved
# (changing only the driver they use) into Tests/FrameworkTests/Upstream (not committed), build
# everything (the library, the example apps, among them the one the multi-process tests start and
# the README's rate-limiting app, the benches, both test targets), then run the tests, and Vapor's
# copied tests again (FRAMEWORK_TEST_RUNS times in all, 3 by default), since they must pass every
# time. Exits non-zero on the first failure; prints the duration and the test counts at the end.
#
#   ./ci.sh         everything
#   ./ci.sh copy    only the copies into Tests/FrameworkTests/Upstream (for a build by hand)
set -euo pipefail
cd "$(dirname "$0")"
started=$(date +%s)

echo "== vapor-mappedkv: Vapor's own cache and session tests, with the MappedKV drivers"
nice -n 19 swift package resolve
upstream=.build/checkouts/vapor/Tests/VaporTests
copies=Tests/FrameworkTests/Upstream
rm -rf "$copies"
mkdir -p "$copies"
# Each edit names the lines it changes and how many there are, so that a change upstream fails
# here instead of leaving a test on Vapor's memory driver.
copy() {  # copy FILE COUNT PATTERN REPLACEMENT
    local file=$1 count=$2 pattern=$3 replacement=$4
    local matches
    matches=$(grep -c -- "$pattern" "$upstream/$file" || true)
    if [ "$matches" != "$count" ]; then
        echo "ci.sh: expected $count lines matching '$pattern' in $upstream/$file, found $matches" >&2
        exit 1
    fi
    sed -e "s|$pattern|$replacement|" "$upstream/$file" > "$copies/$file"
}
# The cache tests use the memory cache Vapor installs by default: the provider line is added after
# each application is made (testCustomCache then installs a cache of its own, as written).
copy CacheTests.swift 2 'let app = Application(.testing)$' \
    'let app = Application(.testing); app.caches.use(.mappedKVForFrameworkTests)'
copy AsyncCacheTests.swift 1 'app = try await Application.make(.testing)$' \
    'app = try await Application.make(.testing); app.caches.use(.mappedKVForFrameworkTests)'
copy SessionTests.swift 1 'app.sessions.use(.memory)' 'app.sessions.use(.mappedKVForFrameworkTests)'
copy AsyncSessionTests.swift 1 'app.sessions.use(.memory)' 'app.sessions.use(.mappedKVForFrameworkTests)'
# Excluded cases: none. (testSessionDestroy installs a mock driver of its own, and
# testCustomCache a cache of its own; both run as written.)

[[ ${1:-} == copy ]] && exit 0

echo "== vapor-mappedkv: swift format lint (the package's own files, not the copies)"
swift format lint --strict --configuration ../../.swift-format --recursive \
    Sources Tests/VaporMappedKVTests Tests/FrameworkTests/FrameworkDriver.swift Package.swift

echo "== vapor-mappedkv: swift build (library, example apps, benches, tests)"
nice -n 19 swift build --build-tests

echo "== vapor-mappedkv: swift test"
log=$(mktemp)
trap 'rm -f "$log"; rm -rf "${TMPDIR:-/tmp}"/vapor-mappedkv-framework-*' EXIT
nice -n 19 swift test --skip-build 2>&1 | tee "$log"

runs=${FRAMEWORK_TEST_RUNS:-3}
for run in $(seq 2 "$runs"); do
    echo "== vapor-mappedkv: Vapor's copied tests again (run $run of $runs)"
    nice -n 19 swift test --skip-build --filter FrameworkTests 2>&1 | tee -a "$log" | tail -3
done

xctest=$(grep -E "^Test Suite 'All tests' passed" -A1 "$log" | grep -oE 'Executed [0-9]+ tests' | head -1 || true)
testing=$(grep -oE 'Test run with [0-9]+ tests? in [0-9]+ suites? passed' "$log" | head -1 || true)
echo "== vapor-mappedkv: passed in $(( $(date +%s) - started )) s (XCTest, Vapor's copied tests: ${xctest:-none}; Swift Testing: ${testing:-none})"
