#!/usr/bin/env bash
# CI for the Vapor integration, from a fresh clone: lint the package's Swift files with the repo's
# .swift-format, build everything (the library, the example app that the two-process test runs,
# the bench), then run the tests. Exits non-zero on the first failure.
set -euo pipefail
cd "$(dirname "$0")"

echo "== vapor-mappedkv: swift format lint"
swift format lint --strict --configuration ../../.swift-format --recursive Sources Tests Package.swift

echo "== vapor-mappedkv: swift build (library, example app, bench, tests)"
nice -n 19 swift build --build-tests

echo "== vapor-mappedkv: swift test"
nice -n 19 swift test --skip-build

echo "== vapor-mappedkv: passed"
