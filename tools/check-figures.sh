#!/usr/bin/env bash
# Sources' comments and DocC articles say why, not how fast: no measured figures in them.
#
# A figure goes stale with the next compiler, machine or change, and a reader cannot tell a stale
# one from a current one. Where a choice rests on a measurement, the comment names the benchmark
# that shows it (`mappedkv bench` set_string, the open-scaling bench's mapped gets, ...) and the
# figures live in docs/bench/, where each is dated and reproducible.
#
# Checked: the comments of Sources/**/*.swift (`//`, `///` and `/* */`, a line's own or trailing
# one; a comment's consecutive lines are read as one text, so a figure split across lines counts)
# and the prose of Sources/**/*.docc/*.md, for
#   - dates (2026-11-21);
#   - instruction counts (`330 instructions`, `80.6M instructions`) and any mention of callgrind or
#     cachegrind;
#   - timings (a number with ns, µs, us, ms or s as its unit);
#   - measured speedups (`9% more`, `+1.3%`, `about 1.5%`, `15% of a set`, `1.3x`, `17x`);
#   - commit hashes in backticks (7 to 40 hex digits, at least one a letter and one a digit).
# Code spans (`every 1.0 seconds`) are code or examples of output, not prose: only the commit hash
# check reads them.
# Durations that are documented behaviour (an API default, a poll interval) are let through by the
# allowlist below, one line a file and pattern.
#
# usage: tools/check-figures.sh [ROOT]    (default: the repository this script is in)
# Exit status 0 when no figure is found, 1 listing each as file:line: text.
set -euo pipefail
root="${1:-$(dirname "$0")/..}"
cd "$root"

exec python3 - <<'PYTHON'
import fnmatch
import pathlib
import re
import sys

# (file, pattern): a figure inside a match of `pattern` (on the comment or paragraph it is in) is let
# through, in the files the shell-style `file` matches (`*` crosses folders). Keep it short: each is
# a duration the code documents as its behaviour, not a measurement.
ALLOW = [
    # A default the API documents (the memory cache's sweep, ...).
    ("Sources/*", r"\d+ ?(ms|s|seconds) by default"),
    # The change watcher's poll interval (ChangeWatcher), which subscribers are told.
    ("Sources/*", r"(every|within( about)?) 10 ms|10 ms poll"),
    # `withExclusiveLock`'s back-off between attempts.
    ("Sources/MappedKV/*", r"1 ms, doubling up to 50 ms|sleeping up to 50 ms"),
    # The disk cache's periodic trim (`DiskCacheConfiguration.trimInterval`'s default).
    ("Sources/MappedKVCache/*", r"60 s\b"),
    # The kernel's clock tick, the reason a coarse clock is coarse (a platform fact).
    ("Sources/MappedKVCache/*", r"tick \(1 to 10 ms\)"),
    # The stress tool's staleness bound (`mappedkv stress --workload cache`).
    ("Sources/mappedkv/Stress/*", r"50 ms"),
]

SOURCE_CHECKS = [
    ("date", r"\b20\d\d-[01]\d-[0-3]\d\b"),
    ("instruction count", r"\b\d[\d,]*(\.\d+)?[MK]? +instructions?\b"),
    ("callgrind", r"(?i)\b(callgrind|cachegrind)\b"),
    ("timing", r"(?<![\w.])\d[\d,]*(\.\d+)?(-\d+(\.\d+)?)? ?(ns|µs|us|ms)\b"),
    ("timing", r"(?<![\w.])\d[\d,]*(\.\d+)? s\b"),
    ("timing", r"(?<![\w.])\d[\d,]*(\.\d+)? (nano|micro|milli)?seconds?\b"),
    (
        "measured speedup",
        r"(?<![\w.])\d+(\.\d+)?% (faster|slower|more|less|fewer|cheaper|quicker|better|worse)\b",
    ),
    ("measured speedup", r"(?<![\w.])[+-]\d+(\.\d+)?%"),
    ("measured speedup", r"(?<![\w.])\d+(\.\d+)?% of (a|an|the|its|one|each|every)\b"),
    ("measured speedup", r"\b(about|roughly|nearly|around|some|only) \d+(\.\d+)?%"),
    ("measured speedup", r"(?<![\w.])\d+(\.\d+)?(-\d+(\.\d+)?)?x\b"),
    ("commit hash", r"`(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}`"),
]


def allowed(path, text, start, end):
    for pattern_path, pattern in ALLOW:
        if not fnmatch.fnmatchcase(path, pattern_path):
            continue
        for m in re.finditer(pattern, text):
            if m.start() <= start and end <= m.end():
                return True
    return False


def swift_comments(text):
    """Yields blocks of (line number, comment text) of consecutive comment lines."""
    block = []
    in_block_comment = False
    for number, line in enumerate(text.split("\n"), 1):
        comment = None
        if in_block_comment:
            end = line.find("*/")
            comment = line if end < 0 else line[:end]
            in_block_comment = end < 0
        else:
            code, comment = split_code(line)
            if comment is not None and comment.startswith("/*"):
                end = comment.find("*/", 2)
                in_block_comment = end < 0
                comment = comment if end < 0 else comment[:end]
        if comment is None:
            if block:
                yield block
            block = []
        else:
            block.append((number, comment))
    if block:
        yield block


def split_code(line):
    """The line's code and its comment (None if it has none), skipping string literals."""
    i = 0
    in_string = False
    while i < len(line):
        c = line[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif line.startswith("//", i) or line.startswith("/*", i):
            return line[:i], line[i:]
        i += 1
    return line, None


def markdown_blocks(text):
    """Yields paragraphs of (line number, text) of consecutive non-blank lines."""
    block = []
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip():
            block.append((number, line))
        elif block:
            yield block
            block = []
    if block:
        yield block


def check(path, blocks, found):
    for block in blocks:
        # One text a block, each line's own span remembered, so that a figure whose number and unit
        # fall on two lines is still one match.
        joined = ""
        spans = []
        for number, line in block:
            if joined:
                joined += " "
            spans.append((len(joined), number, line))
            joined += re.sub(r"^\s*(//+|/\*+|\*+)?\s*", "", line).rstrip()
        # Code spans are code or an example of output (`every 1.0 seconds`, `52.3 ms`), not prose:
        # blanked for every check but the commit hash's, which looks for them.
        prose = re.sub(r"`[^`]*`", lambda m: " " * len(m.group()), joined)
        for name, pattern in SOURCE_CHECKS:
            for m in re.finditer(pattern, joined if name == "commit hash" else prose):
                if allowed(path, joined, m.start(), m.end()):
                    continue
                _, number, line = max(s for s in spans if s[0] <= m.start())
                found.add((path, number, line.strip()))


found = set()
for path in sorted(pathlib.Path("Sources").rglob("*.swift")):
    check(str(path), swift_comments(path.read_text(encoding="utf-8")), found)
for path in sorted(pathlib.Path("Sources").glob("*/*.docc/**/*.md")):
    check(str(path), markdown_blocks(path.read_text(encoding="utf-8")), found)

for path, number, line in sorted(found):
    print(f"{path}:{number}: {line}")
if found:
    print(
        f"check-figures: {len(found)} line(s) of Sources' comments or articles carry a figure (a date,"
        " instruction count, timing, measured speedup or commit hash); name the benchmark instead"
        " (docs/bench/)",
        file=sys.stderr,
    )
    sys.exit(1)
PYTHON
