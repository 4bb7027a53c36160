#!/usr/bin/env bash
# Builds, lints and tests the Hummingbird integration from a fresh clone: swift-format lint of its
# Swift files, `swift build` (the library, the example app the tests start twice, the benchmark),
# then `swift test`. Prints each step; exits non-zero at the first failure.
set -euo pipefail
cd "$(dirname "$0")"

step() { printf '\n== %s\n' "$*"; }

step "swift format lint --strict (Integrations/hummingbird-mappedkv)"
swift format lint --strict --configuration ../../.swift-format --recursive Package.swift Sources Tests

step "swift build (debug: library, example app, benchmark)"
start=$(date +%s)
nice -n 19 swift build
echo "built in $(( $(date +%s) - start )) s"

step "swift test"
nice -n 19 swift test

step "hummingbird-mappedkv: all passed"
