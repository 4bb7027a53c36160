#!/usr/bin/env bash
# Checks the layers inside the MappedKV module, which the compiler cannot (docs/ARCHITECTURE.md 1,
# "Inside MappedKV"): data flows API/ -> Sharing/ -> Store/, so
# - a file in Store/ names no type declared in Sharing/, and none of API/'s facade (API_FACADE
#   below: the handles and the inspector; API/'s value types are for every layer);
# - a file in Sharing/ names none of API/'s facade;
# and the file-level rules of the allowed-imports table hold: an import the table allows "in `X`
# and `Y` only" appears in no other file of its module.
#
# Types are found by their declarations at the start of a line (`struct`, `enum`, `class`,
# `protocol`, `actor`, `typealias`, with any modifiers); a use is the name as a whole word in a
# line's code, comments and string literals left out.
#
# usage: tools/check-layers.sh
# Exit status 0 when every rule holds, 1 listing each violation as file:line.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 - <<'PY'
import os, re, sys

root = "Sources/MappedKV"
doc = "docs/ARCHITECTURE.md"

# The facade of API/: what Store/ and Sharing/ never name (docs/ARCHITECTURE.md 1). The rest of
# API/ is value types (configuration, errors, locations, kinds, damage and reports) that every layer
# may use. Nested types (Transaction, ExclusiveLock) are listed by name.
API_FACADE = {"MappedKV", "Transaction", "ExclusiveLock", "StoreInspector", "KeyValueAccess", "Stored"}

declaration = re.compile(
    r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate|final|indirect|open)\s+)*"
    r"(?:struct|enum|class|protocol|actor|typealias)\s+(\w+)")

def swift_files(folder):
    for base, _, names in os.walk(folder):
        for name in sorted(names):
            if name.endswith(".swift"):
                yield os.path.join(base, name)

def declared(folder):
    names = {}
    for path in swift_files(folder):
        with open(path) as f:
            for line in f:
                m = declaration.match(line)
                if m:
                    names[m.group(1)] = path
    return names

def code_lines(path):
    """Each line's code, with comments and string literals blanked (a line-level approximation)."""
    in_block = False
    with open(path) as f:
        for number, line in enumerate(f, 1):
            out = []
            i = 0
            in_string = False
            while i < len(line):
                if in_block:
                    end = line.find("*/", i)
                    if end < 0:
                        i = len(line)
                        continue
                    in_block = False
                    i = end + 2
                    continue
                if in_string:
                    if line[i] == "\\":
                        i += 2
                        continue
                    if line[i] == '"':
                        in_string = False
                    i += 1
                    continue
                if line.startswith("//", i):
                    break
                if line.startswith("/*", i):
                    in_block = True
                    i += 2
                    continue
                if line[i] == '"':
                    in_string = True
                    i += 1
                    continue
                out.append(line[i])
                i += 1
            yield number, "".join(out)

sharing = declared(os.path.join(root, "Sharing"))
violations = []

everything = "".join(open(p).read() for p in swift_files(os.path.join(root, "API")))
for name in sorted(API_FACADE):
    if not re.search(rf"\b(?:class|struct|enum|protocol)\s+{name}\b", everything):
        violations.append(f"tools/check-layers.sh: {name} is listed as API/'s facade but not declared there")

def check(folder, forbidden, layer):
    words = re.compile(r"\b(" + "|".join(sorted(map(re.escape, forbidden))) + r")\b") if forbidden else None
    for path in swift_files(os.path.join(root, folder)):
        for number, code in code_lines(path):
            for m in (words.finditer(code) if words else []):
                name = m.group(1)
                # A member access such as `.configuration` or a label is not a type's name.
                if code[max(0, m.start() - 1):m.start()] == ".":
                    continue
                violations.append(
                    f"{path}:{number}: {folder} uses {name} ({forbidden[name]}), from a layer above it ({layer})")

facade = {name: os.path.join(root, "API") for name in API_FACADE}
forbidden_in_store = dict(sharing)
forbidden_in_store.update(facade)
check("Store", forbidden_in_store, "Store/ uses only API/'s value types")
check("Sharing", facade, "Sharing/ uses Store/ and API/'s value types")

# File-level rules of the allowed-imports table: "`X` ... in `a` and `b` only".
table = []
inside = False
for line in open(doc):
    if "<!-- allowed-imports:begin -->" in line:
        inside = True
        continue
    if "<!-- allowed-imports:end -->" in line:
        break
    if inside and line.startswith("|"):
        cells = line.split("|")
        if len(cells) >= 5 and "`" in cells[1]:
            table.append((cells[1].strip(" `"), cells[4]))
rule = re.compile(r"`(\w+)`[^;|]*? in ((?:`[^`]+`(?:,\s*|\s+and\s+)?)+) only")
for module, description in table:
    for m in rule.finditer(description):
        imported = m.group(1)
        files = set(re.findall(r"`([^`]+)`", m.group(2)))
        folder = os.path.join("Sources", module)
        if not os.path.isdir(folder):
            continue
        for path in swift_files(folder):
            relative = os.path.relpath(path, folder)
            if relative in files or os.path.basename(path) in files:
                continue
            for number, code in code_lines(path):
                if re.match(rf"\s*(?:@\w+\s+)?import\s+{imported}\b", code):
                    violations.append(
                        f"{path}:{number}: imports {imported}, which {doc} allows in {module} only in "
                        + ", ".join(sorted(files)))

if violations:
    print("\n".join(violations))
    sys.exit(1)
print(f"check-layers: {root}'s Store/, Sharing/ and API/ use only what the layers below them declare, "
      "and every import the table allows in named files only stays in them")
PY
