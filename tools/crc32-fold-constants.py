#!/usr/bin/env python3
"""Derives and checks the folding constants of Sources/CCRC32/crc32_fold.c.

CRC-32 (ISO-HDLC, zlib) uses P(x) = x^32 + 0x04C11DB7 (bit-reflected: 0xEDB88320).
The C code keeps a 128-bit register whose bit t stands for x^(127 - t) (the first
byte of a block is its highest-degree part, as the reflected CRC reads it).
Carry-less multiplying the low 64 bits of such a register by a constant whose bit j
stands for x^(32 - j) lands the product in the same layout, times x^32.  So every
"x^n mod P" constant is stored as c(k) = reflect32(k) << 1, a 33-bit value.

This script prints the constants and runs a bit-exact model of the C code's
operations (fold loop, 16-byte fold, overlapping tail, Barrett reduction) against
zlib.crc32 for many lengths and starting values.  Run: python3 tools/crc32-fold-constants.py
"""

import random
import zlib

P = (1 << 32) | 0x04C11DB7  # the generator, normal bit order
MASK64 = (1 << 64) - 1


def pmod(a, p=P):
    """a mod p over GF(2)."""
    dp = p.bit_length() - 1
    while a.bit_length() - 1 >= dp:
        a ^= p << (a.bit_length() - 1 - dp)
    return a


def pdiv(a, p=P):
    """floor(a / p) over GF(2)."""
    q = 0
    dp = p.bit_length() - 1
    while a.bit_length() - 1 >= dp:
        s = a.bit_length() - 1 - dp
        q |= 1 << s
        a ^= p << s
    return q


def reflect(v, bits):
    return int(f"{v:0{bits}b}"[::-1], 2)


def c(k):
    """A polynomial of degree <= 32 as the 64-bit operand the C code uses: bit j is x^(32 - j)."""
    assert k.bit_length() <= 33
    return reflect(k, 33)


def xpow_mod(n):
    return pmod(1 << n)


CONSTANTS = {
    # fold 4 x 128 bits over 512 bits: the high-degree 64 bits by x^(512+64) = x^544 * x^32 ...
    "FOLD512_LO  x^544 mod P": c(xpow_mod(544)),
    "FOLD512_HI  x^480 mod P": c(xpow_mod(480)),
    # fold one 128-bit register into the next 128 bits
    "FOLD128_LO  x^160 mod P": c(xpow_mod(160)),
    "FOLD128_HI  x^96  mod P": c(xpow_mod(96)),
    # 128 -> 96 bits (R * x^32): the high 64 bits times x^96 mod P
    "RED96       x^96  mod P": c(xpow_mod(96)),
    # 96 -> 64 bits: the high 32 bits times x^64 mod P
    "RED64       x^64  mod P": c(xpow_mod(64)),
    # Barrett: mu = floor(x^64 / P) and P itself
    "MU          x^64 div P": c(pdiv(1 << 64)),
    "POLY        P         ": c(P),
}


# --- a model of the SSE operations, on Python ints -------------------------------------------


def clmul(a, b):
    r = 0
    while b:
        if b & 1:
            r ^= a
        b >>= 1
        a <<= 1
    return r


def clmul_sel(x, k, imm):
    """_mm_clmulepi64_si128(x, k, imm) on 128-bit ints."""
    a = (x >> 64) & MASK64 if imm & 0x01 else x & MASK64
    b = (k >> 64) & MASK64 if imm & 0x10 else k & MASK64
    return clmul(a, b)


def pair(lo, hi):
    return (hi << 64) | lo


def load(data, pos):
    return int.from_bytes(data[pos:pos + 16], "little")


def fold(x, k):
    return clmul_sel(x, k, 0x00) ^ clmul_sel(x, k, 0x11)


def reduce128(r):
    k = CONSTANTS
    s = clmul_sel(r, pair(k["RED96       x^96  mod P"], 0), 0x00) ^ (r >> 64)
    shifted = ((s & 0xFFFFFFFF) << 32) | (s & ~MASK64)  # _mm_slli_epi64(s, 32) on the low lane
    s2 = clmul_sel(shifted, pair(k["RED64       x^64  mod P"], 0), 0x00) ^ s
    t1 = s2 & (0xFFFFFFFF << 32)
    q = clmul_sel(t1, pair(k["MU          x^64 div P"], 0), 0x00) & (0xFFFFFFFF << 32)
    z = clmul_sel(q, pair(k["POLY        P         "], 0), 0x00) ^ s2
    return (z >> 64) & 0xFFFFFFFF


def model(crc, data):
    """The C code's path for len >= 16, step for step."""
    n = len(data)
    assert n >= 16
    k512 = pair(CONSTANTS["FOLD512_LO  x^544 mod P"], CONSTANTS["FOLD512_HI  x^480 mod P"])
    k128 = pair(CONSTANTS["FOLD128_LO  x^160 mod P"], CONSTANTS["FOLD128_HI  x^96  mod P"])
    pos = 0
    x0 = load(data, 0) ^ (crc ^ 0xFFFFFFFF)
    pos = 16
    if n >= 64:
        xs = [x0, load(data, 16), load(data, 32), load(data, 48)]
        pos = 64
        while n - pos >= 64:
            xs = [fold(xs[i], k512) ^ load(data, pos + 16 * i) for i in range(4)]
            pos += 64
        x0 = xs[0]
        for i in range(1, 4):
            x0 = fold(x0, k128) ^ xs[i]
    while n - pos >= 16:
        x0 = fold(x0, k128) ^ load(data, pos)
        pos += 16
    rest = n - pos
    if rest:
        # stream = x0 (16 bytes) then `rest` bytes: the first `rest` bytes of x0 fold over 128 bits,
        # the other 16 - rest bytes join the tail as the last 16 bytes of the buffer.
        head = (x0 << (8 * (16 - rest))) & ((1 << 128) - 1)  # bytes 0..rest-1 moved to the top
        keep = x0 >> (8 * rest)  # bytes rest..15 moved to the bottom
        last = load(data, n - 16)
        tailmask = ((1 << (8 * rest)) - 1) << (8 * (16 - rest))
        x0 = fold(head, k128) ^ (last & tailmask) ^ keep
    return reduce128(x0) ^ 0xFFFFFFFF


def main():
    for name, value in CONSTANTS.items():
        print(f"{name}  0x{value:09x}")
    rng = random.Random(0xC8C32)
    for n in list(range(16, 400)) + [1024, 4096 + 13, 65536 + 7]:
        for _ in range(3):
            data = bytes(rng.getrandbits(8) for _ in range(n))
            crc = rng.getrandbits(32)
            assert model(crc, data) == zlib.crc32(data, crc), n
    print("model matches zlib.crc32")


if __name__ == "__main__":
    main()
