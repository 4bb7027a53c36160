#!/usr/bin/env bash
# Builds, lints and tests the Hummingbird integration from a fresh clone: swift-format lint of its
# Swift files; a copy of Hummingbird's own persist tests and hummingbird-auth's own session tests,
# from the checkouts this package resolves, into Tests/FrameworkTests/Upstream/ (not committed),
# with only the driver they make swapped for ours; one build of everything (the example apps,
# among them the README's rate-limiting app, included); the package's tests;
# then the frameworks' tests again, FRAMEWORK_RUNS times in all (3 by default), since they must
# pass every time, not once. Prints each step; exits non-zero at the first failure.
#
#   ./ci.sh         everything
#   ./ci.sh copy    only the copies into Tests/FrameworkTests/Upstream/ (for a build by hand)
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n== %s\n' "$*"; }
started=$(date +%s)

# Copies one upstream test file to Upstream/, swapping `from` for `to` by sed, and fails unless
# exactly `expected` lines changed and no MemoryPersistDriver is left: an upstream change that
# makes the swap miss a driver stops the run instead of testing the memory driver.
copy_swapping() {
    local source=$1 target=$2 expected=$3
    shift 3
    [[ -f $source ]] || { echo "missing $source: has the dependency moved its tests?" >&2; exit 1; }
    sed "$@" "$source" >"$target"
    local changed
    changed=$(diff "$source" "$target" | grep -c '^>' || true)
    if [[ $changed -ne $expected ]] || grep -q 'MemoryPersistDriver' "$target"; then
        echo "$source: $changed lines swapped, expected $expected, or a MemoryPersistDriver is left" >&2
        exit 1
    fi
    echo "copied $source ($changed lines swapped)"
}

copy_framework_tests() {
    step "copy the frameworks' own tests into Tests/FrameworkTests/Upstream"
    nice -n 19 swift package resolve
    local upstream=Tests/FrameworkTests/Upstream
    rm -rf "$upstream"
    mkdir -p "$upstream"
    # Hummingbird: the router-building helper makes the driver; its configuration type is the
    # memory driver's, whose `init(tidyFrequency:)` ours matches. Two lines swapped, one import added.
    copy_swapping .build/checkouts/hummingbird/Tests/HummingbirdTests/PersistTests.swift \
        "$upstream/PersistTests.swift" 3 \
        -e 's/MemoryPersistDriver<ContinuousClock>\.Configuration/MappedKVPersistDriver.Configuration/' \
        -e 's/MemoryPersistDriver(configuration: configuration)/try makeFrameworkTestDriver(configuration: configuration)/' \
        -e '/^import Foundation$/a import HummingbirdMappedKV'
    # hummingbird-auth: every test makes `MemoryPersistDriver()`; each becomes a driver on a fresh
    # directory. One import added.
    local sessions=.build/checkouts/hummingbird-auth/Tests/HummingbirdAuthTests/SessionTests.swift
    local drivers
    drivers=$(grep -c 'MemoryPersistDriver()' "$sessions" || true)
    copy_swapping "$sessions" "$upstream/SessionTests.swift" $((drivers + 1)) \
        -e 's/MemoryPersistDriver()/try makeFrameworkTestDriver()/' \
        -e '/^import Foundation$/a import HummingbirdMappedKV'
}

copy_framework_tests
[[ ${1:-} == copy ]] && exit 0

step "swift format lint --strict (Integrations/hummingbird-mappedkv)"
swift format lint --strict --configuration ../../.swift-format --recursive Package.swift Sources Tests/HummingbirdMappedKVTests Tests/FrameworkTests/FrameworkDriver.swift

step "swift build --build-tests (debug: library, example apps, benchmark, tests)"
start=$(date +%s)
nice -n 19 swift build --build-tests
echo "built in $(( $(date +%s) - start )) s"

step "swift test (the package's tests and, once, the frameworks' tests)"
nice -n 19 swift test --skip-build

runs=${FRAMEWORK_RUNS:-3}
for run in $(seq 2 "$runs"); do
    step "the frameworks' tests again (run $run of $runs)"
    nice -n 19 swift test --skip-build --filter 'FrameworkTests\.'
done

step "hummingbird-mappedkv: all passed in $(( $(date +%s) - started )) s"
