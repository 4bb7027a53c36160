#!/usr/bin/env python3
"""Regenerates the vector files in this folder.

Independent of the Swift code under test: CRCs come from Python's zlib, varints and payloads from a
direct transcription of docs/FORMAT.md sections 0 and 2.5. Before writing anything the script
cross-checks its encoder against the bytes of the worked example in docs/FORMAT.md 2.11 and against
../mmkv-2.4.2/a_plain/case_a.expect (payloads written by real MMKV 2.4.2).

Usage: python3 Vectors/format/generate.py   (from the package root or from anywhere)
"""

import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
MASK64 = (1 << 64) - 1


# --- encoders (docs/FORMAT.md 0 and 2.5) ---------------------------------------------------------

def varint(value):
    """Minimal protobuf base-128 varint of an unsigned 64-bit value."""
    assert 0 <= value <= MASK64
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def enc_bool(v):
    return b"\x01" if v else b"\x00"


def enc_signed(v):
    # int32 and int64 alike: varint of the 64-bit two's-complement bits (10 bytes when negative).
    return varint(v & MASK64)


def enc_unsigned(v):
    return varint(v)


def enc_float(v):
    return struct.pack("<f", v)


def enc_double(v):
    return struct.pack("<d", v)


def enc_string(s):
    b = s.encode("utf-8")
    return varint(len(b)) + b


def enc_bytes(b):
    return varint(len(b)) + b


def enc_strings(items):
    body = b"".join(enc_string(s) for s in items)
    return varint(len(body)) + body


def record(key, payload):
    k = key.encode("utf-8")
    return varint(len(k)) + k + varint(len(payload)) + payload


# --- cross-checks against real MMKV output -------------------------------------------------------

WORKED_HOLDER = bytes.fromhex("80e0e974")
WORKED_SETS = [
    ("b", enc_bool(True)),
    ("i32", enc_signed(-1)),
    ("u32", enc_unsigned(300)),
    ("i64", enc_signed(-2)),
    ("u64", enc_unsigned(1 << 40)),
    ("f", enc_float(1.5)),
    ("d", enc_double(2.25)),
    ("s", enc_string("hello")),
    ("es", enc_string("")),
    ("v", enc_strings(["a", "bc"])),
    ("bytes", enc_bytes(bytes([1, 2, 3]))),
]


def worked_region():
    region = WORKED_HOLDER + b"".join(record(k, p) for k, p in WORKED_SETS)
    region += varint(1) + b"b" + b"\x00"  # deletion of "b"
    return region


# The dump of docs/FORMAT.md 2.11, transcribed by hand (HDR excluded).
WORKED_DUMP = bytes.fromhex("".join([
    "80e0e974",                                  # holder
    "01 62 01 01",                               # "b" = true
    "03 693332 0a", "ff" * 9, "01",              # "i32" = -1 (10-byte varint)
    "03 753332 02 ac02",                         # "u32" = 300
    "03 693634 0a", "fe", "ff" * 8, "01",        # "i64" = -2
    "03 753634 06 808080808020",                 # "u64" = 2^40
    "01 66 04 0000c03f",                         # "f" = 1.5
    "01 64 08 0000000000000240",                 # "d" = 2.25
    "01 73 06 05 68656c6c6f",                    # "s" = "hello"
    "02 6573 01 00",                             # "es" = ""
    "01 76 06 05 01 61 02 6263",                 # "v" = {"a", "bc"}
    "05 6279746573 04 03 010203",                # "bytes" = 01 02 03
    "01 62 00",                                  # deletion of "b"
]).replace(" ", ""))


def check_worked_example():
    region = worked_region()
    assert region == WORKED_DUMP, (region.hex(), WORKED_DUMP.hex())
    assert len(region) == 111
    assert zlib.crc32(region) == 0xE61B125B
    assert zlib.crc32(region[:4]) == 0xBD2B4407


def check_case_a():
    expect = {}
    with open(os.path.join(HERE, "..", "mmkv-2.4.2", "a_plain", "case_a.expect")) as f:
        for line in f:
            key, value = line.rstrip("\n").split("\t")
            if not key.startswith("#"):
                expect[key] = value
    ours = {
        "i32": enc_signed(-42),
        "u32": enc_unsigned(4000000000),
        "i64": enc_signed(-9000000000),
        "u64": enc_unsigned(MASK64),
        "b": enc_bool(True),
        "d": enc_double(3.141592653589793),
        "f": enc_float(1.5),
        "s": enc_string("hello, MMKV \u2713"),
        "by": enc_bytes(bytes.fromhex("00ff7f80")),
    }
    assert {k: v.hex() for k, v in ours.items()} == expect, expect


# --- vector files ---------------------------------------------------------------------------------

def write(name, header, rows):
    with open(os.path.join(HERE, name), "w", encoding="utf-8") as f:
        for line in header:
            f.write(("# " + line).rstrip() + "\n")
        for row in rows:
            if isinstance(row, str):
                f.write(row + "\n")
            else:
                f.write("\t".join(row) + "\n")


def crc_rows():
    rows = ["# ascii: the input is the field's text, as UTF-8 bytes (an empty field is the empty input)"]
    for text in ["123456789", "", "a", "abc", "message digest", "MMKV",
                 "The quick brown fox jumps over the lazy dog", "hello, MMKV \u2713"]:
        rows.append(("ascii", text, "%08x" % zlib.crc32(text.encode("utf-8"))))
    rows.append("# hex: the input is given as hex")
    for h in ["00", "ff", "00000000", "ffffffff", "80e0e974", "0001020304050607", "deadbeef",
              "80e0e97401620101", bytes(range(256)).hex()]:
        rows.append(("hex", h, "%08x" % zlib.crc32(bytes.fromhex(h))))
    rows.append("# zeros: the input is that many zero bytes")
    for n in [1, 4, 111, 4096]:
        rows.append(("zeros", str(n), "%08x" % zlib.crc32(bytes(n))))
    rows.append("# chunks: space-separated hex chunks; the CRC is chained over them (zlib.crc32(chunk, crc)),")
    rows.append("# starting from 0, and equals the CRC of their concatenation; '-' is an empty chunk")
    region = worked_region()
    chunk_cases = [
        ["31323334", "", "3536373839"],
        [region[:4].hex(), region[4:8].hex(), region[8:].hex()],
        ["00", "ff", "00", "ff", "0102030405"],
    ]
    for chunks in chunk_cases:
        crc = 0
        for c in chunks:
            crc = zlib.crc32(bytes.fromhex(c), crc)
        assert crc == zlib.crc32(bytes.fromhex("".join(chunks)))
        rows.append(("chunks", " ".join(c if c else "-" for c in chunks), "%08x" % crc))
    return rows


def varint_rows():
    values = [0, 1, 2, 127, 128, 129, 300, 16383, 16384, (1 << 21) - 1, 1 << 21,
              (1 << 28) - 1, 1 << 28, 0x7FFFFFFF, 0x80000000, (1 << 32) - 1, 1 << 32, 1 << 35,
              1 << 40, (1 << 56) - 1, 1 << 56, (1 << 63) - 1, 1 << 63, MASK64,
              MASK64 - 1]  # 2^64-2 is int64 -2
    return [(str(v), varint(v).hex()) for v in values]


def quote(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def payload_rows():
    rows = []
    for v in [False, True]:
        rows.append(("bool", "true" if v else "false", enc_bool(v).hex()))
    for v in [0, 1, 127, 128, 300, -1, -2, -42, 2147483647, -2147483648]:
        rows.append(("int32", str(v), enc_signed(v).hex()))
    for v in [0, 1, 300, 4000000000, 4294967295]:
        rows.append(("uint32", str(v), enc_unsigned(v).hex()))
    for v in [0, 1, -1, -2, 1 << 40, -9000000000, 9223372036854775807, -9223372036854775808]:
        rows.append(("int64", str(v), enc_signed(v).hex()))
    for v in [0, 1, 1 << 40, 1 << 63, MASK64]:
        rows.append(("uint64", str(v), enc_unsigned(v).hex()))
    for text in ["0", "-0", "1.5", "-2.5", "0.1", "3.4028235e+38", "1e-45", "inf", "-inf"]:
        rows.append(("float", text, enc_float(float(text)).hex()))
    for text in ["0", "-0", "2.25", "3.141592653589793", "0.1", "-1e+300", "5e-324", "inf", "-inf"]:
        rows.append(("double", text, enc_double(float(text)).hex()))
    for s in ["", "hello", "a", "hello, MMKV \u2713", "h\u00e9llo", "\u4e2d\u6587", "\U0001F600",
              'quote " and \\ backslash', "x" * 127, "y" * 128]:
        rows.append(("string", quote(s), enc_string(s).hex()))
    for h in ["", "00", "010203", "00ff7f80", "ff" * 130]:
        rows.append(("bytes", h if h else "-", enc_bytes(bytes.fromhex(h)).hex()))
    for items in [[], ["a", "bc"], [""], ["", ""], ["hello", "", "\u2713"], ["z" * 200]]:
        rows.append(("strings", "[" + ",".join(quote(s) for s in items) + "]", enc_strings(items).hex()))
    rows.append(("int", "-1", enc_signed(-1).hex()))
    rows.append(("int", "1099511627776", enc_signed(1 << 40).hex()))
    return rows


def main():
    check_worked_example()
    check_case_a()

    write("crc32.txt", [
        "CRC-32 (zlib crc32, ISO-HDLC, reflected poly 0xEDB88320): kind<TAB>input<TAB>expected (8 hex digits).",
        "Expected values computed with Python zlib.crc32 by generate.py.",
    ], crc_rows())

    write("varint.txt", [
        "Minimal protobuf varints: value (decimal, unsigned 64-bit)<TAB>encoding (hex).",
        "Expected encodings computed by generate.py (7 bits per byte, low group first).",
    ], varint_rows())

    write("payloads.txt", [
        "Value payloads (docs/FORMAT.md 2.5): type<TAB>value<TAB>expected payload (hex).",
        "Types: bool, int32, uint32, int64, uint64, int (stored as int64), float, double,",
        "string, bytes, strings (vector<string>).",
        "Values: integers in decimal; float/double as decimal text or inf/-inf (value = nearest float);",
        'string as a double-quoted literal with \\" and \\\\ escapes (UTF-8 text, may be non-ASCII);',
        "bytes as hex, '-' for no bytes; strings as [\"a\",\"bc\"] with the same quoting, [] for empty.",
        "Expected payloads computed by generate.py from the rules of docs/FORMAT.md 2.5 and cross-checked",
        "against the worked example of 2.11 and ../mmkv-2.4.2/a_plain/case_a.expect.",
    ], payload_rows())

    region = worked_region()
    with open(os.path.join(HERE, "worked-example-2.11.hex"), "w") as f:
        f.write("# docs/FORMAT.md 2.11: data file bytes [4, 4+actualSize) = holder + 12 records, as hex.\n")
        f.write("# Whitespace and lines starting with '#' are ignored.\n")
        f.write(region[:4].hex() + "\n")
        pos = 4
        for key, payload in WORKED_SETS + [("b", b"")]:
            n = len(record(key, payload))
            f.write(region[pos:pos + n].hex() + "\n")
            pos += n
        assert pos == len(region)

    live = {}
    for key, payload in WORKED_SETS:
        live[key] = payload
    del live["b"]
    rows = [
        ("meta", "crc", "%08x" % zlib.crc32(region)),
        ("meta", "version", "4"),
        ("meta", "sequence", "1"),
        ("meta", "iv", "00" * 16),
        ("meta", "actualSize", str(len(region))),
        ("meta", "lastConfirmedActualSize", "4"),
        ("meta", "lastConfirmedCRC", "%08x" % zlib.crc32(region[:4])),
        ("meta", "flags", "0"),
        ("region", "holder", region[:4].hex()),
        ("region", "records", str(len(WORKED_SETS) + 1)),
        ("region", "skippedEmptyKeys", "0"),
        ("region", "liveCount", str(len(live))),
    ]
    rows += [("key", k, live[k].hex()) for k in sorted(live, key=lambda s: s.encode())]
    write("worked-example-2.11.txt", [
        "Expected state of the worked example of docs/FORMAT.md 2.11 (data region in worked-example-2.11.hex).",
        "meta<TAB>field<TAB>value: the 112-byte meta struct (crc values in hex, others decimal, iv in hex).",
        "region<TAB>what<TAB>value: facts about decoding the region (holder hex; counts decimal).",
        "key<TAB>name<TAB>payload hex: the live keys after decoding, sorted by key bytes ('b' was deleted).",
        "CRCs computed with Python zlib.crc32 by generate.py; they match the values printed in 2.11.",
    ], rows)


if __name__ == "__main__":
    main()
