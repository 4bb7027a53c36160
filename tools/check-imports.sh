#!/usr/bin/env bash
# Every import in Sources/ is one docs/ARCHITECTURE.md allows.
#
# The allowed imports are the table of docs/ARCHITECTURE.md between the lines
# `<!-- allowed-imports:begin -->` and `<!-- allowed-imports:end -->`: one row a module, its name in
# backticks in the first column, what it may import in backticks in the third (module names; for a
# C target, the headers it may include as `<header.h>`). That table is the one source of truth: the
# document shows it and this script enforces it.
#
# Checked: every `import M` of Sources/<Module>/**.swift, with any attributes (`@testable`,
# `@_exported`, `@preconcurrency`), access level (`package import`, `internal import`) or kind
# (`import struct M.X`); every `#include <h>` of a C target (a `#include "h"` must name a header of
# the target itself); every folder of Sources/ has a row; and the package's own targets each Swift
# module may import are exactly its dependencies in Package.swift (needs `swift package
# dump-package`; skipped with --no-package).
#
# usage: tools/check-imports.sh [--no-package]
# Exit status 0 when everything is allowed, 1 listing each violation as file:line, 2 when the table
# cannot be read.
set -euo pipefail
cd "$(dirname "$0")/.."

doc=docs/ARCHITECTURE.md
check_package=1
[ "${1:-}" = "--no-package" ] && check_package=0

# "Module<TAB>allowed allowed ..." from the table's rows.
table=$(awk '
    /<!-- allowed-imports:begin -->/ { inside = 1; next }
    /<!-- allowed-imports:end -->/ { inside = 0 }
    inside && /^\|/ {
        n = split($0, cells, "|")
        if (n < 5 || cells[2] !~ /`/) next
        module = cells[2]; gsub(/[ `]/, "", module)
        allowed = ""
        rest = cells[4]
        while (match(rest, /`[^`]+`/)) {
            allowed = allowed " " substr(rest, RSTART + 1, RLENGTH - 2)
            rest = substr(rest, RSTART + RLENGTH)
        }
        print module "\t" allowed
    }' "$doc")
if [ -z "$table" ]; then
    echo "check-imports: no allowed-imports table in $doc" >&2
    exit 2
fi

declare -A allowed
while IFS=$'\t' read -r module list; do allowed[$module]=" $list "; done <<<"$table"

violations=()
for dir in Sources/*/; do
    module=$(basename "$dir")
    if [ -z "${allowed[$module]+set}" ]; then
        violations+=("$dir: module $module has no row in $doc's allowed-imports table")
        continue
    fi
    # file:line:name for every import of a Swift module.
    while IFS= read -r hit; do
        [ -z "$hit" ] && continue
        name=${hit##*:}
        [[ "${allowed[$module]}" == *" $name "* ]] ||
            violations+=("${hit%:*}: $module imports $name, which $doc does not allow")
    done < <(find "$dir" -name '*.swift' -print0 | sort -z | xargs -0 -r awk '
        match($0, /^[ \t]*(@[A-Za-z_]+(\([^)]*\))?[ \t]+)*((public|package|internal|fileprivate|private)[ \t]+)?import[ \t]+((typealias|struct|class|enum|protocol|let|var|func)[ \t]+)?[A-Za-z_][A-Za-z0-9_]*/) {
            statement = substr($0, RSTART, RLENGTH)
            sub(/.*import[ \t]+((typealias|struct|class|enum|protocol|let|var|func)[ \t]+)?/, "", statement)
            print FILENAME ":" FNR ":" statement
        }')
    # file:line:<header> or file:line:"header" for every include of a C target.
    while IFS= read -r hit; do
        [ -z "$hit" ] && continue
        header=${hit#*:*:}
        location=${hit%%:"$header"}
        case "$header" in
            \"*)
                name=${header//\"/}
                [ -n "$(find "$dir" -path "*/$name" -print -quit)" ] ||
                    violations+=("$location: $module includes $header, which is not a header of $module")
                ;;
            *)
                [[ "${allowed[$module]}" == *" $header "* ]] ||
                    violations+=("$location: $module includes $header, which $doc does not allow")
                ;;
        esac
    done < <(find "$dir" \( -name '*.c' -o -name '*.h' \) -print0 | sort -z | xargs -0 -r awk '
        match($0, /^[ \t]*#[ \t]*include[ \t]*[<"][^>"]+[>"]/) {
            header = substr($0, RSTART, RLENGTH)
            sub(/^[ \t]*#[ \t]*include[ \t]*/, "", header)
            print FILENAME ":" FNR ":" header
        }')
done

# The package's own targets a Swift module may import are exactly its target dependencies.
if [ "$check_package" = 1 ]; then
    if ! command -v jq >/dev/null; then
        echo "check-imports: jq is needed to read Package.swift (or pass --no-package)" >&2
        exit 2
    fi
    targets=" $(ls Sources | tr '\n' ' ') "
    dependencies=$(swift package dump-package 2>/dev/null | jq -r '
        .targets[] | select(.type == "regular" or .type == "executable")
        | .name + "\t" + ([.dependencies[] | (.byName // .target // empty)[0]] | join(" "))')
    while IFS=$'\t' read -r module declared; do
        [ -z "${allowed[$module]+set}" ] && continue
        for name in ${allowed[$module]}; do
            [[ "$targets" == *" $name "* && " $declared " != *" $name "* ]] &&
                violations+=("Package.swift: $doc lets $module import $name, which is not a dependency of $module")
        done
        for name in $declared; do
            [[ "${allowed[$module]}" == *" $name "* ]] ||
                violations+=("Package.swift: $module depends on $name, which $doc does not let it import")
        done
    done <<<"$dependencies"
fi

if [ ${#violations[@]} -gt 0 ]; then
    printf '%s\n' "${violations[@]}"
    echo "check-imports: ${#violations[@]} import(s) the architecture does not allow (docs/ARCHITECTURE.md, 1)" >&2
    exit 1
fi
echo "check-imports: every import in Sources is one docs/ARCHITECTURE.md allows"
