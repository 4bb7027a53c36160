// CRC-32 by carry-less multiplication folding.
//
// Invariant: mkv_crc32_fold(crc, data, length) == zlib's crc32(crc, data, length), bit for bit, for
// every starting crc and every input. The CRC is zlib's (ISO-HDLC): generator
// P(x) = x^32 + 0x04C11DB7, processed bit-reflected (0xEDB88320), the running value complemented
// on entry and on exit. Chained calls therefore compose exactly as they do with zlib.
//
// The method is the one of Gopal et al., "Fast CRC Computation for Generic Polynomials Using
// PCLMULQDQ Instruction" (Intel, 2009), written here from the math:
//
// Polynomials and registers. Reflected CRCs read each byte from bit 0 and the message from its
// first byte, so the first bit read is the highest-degree coefficient. A 16-byte little-endian
// load is thus a 128-bit register whose bit t holds the coefficient of x^(127 - t): its low
// 64 bits (lane 0) are the high-degree half H and its high 64 bits (lane 1) the low half L, and
// the block is H(x) x^64 + L(x). The CRC of a message M (after the entry complement, which is
// the XOR of ~crc into its first 4 bytes) is the bit-reflection of M(x) x^32 mod P(x).
//
// Constants. A constant k(x) of degree <= 32 is stored as the 64-bit value c(k) whose bit j
// holds the coefficient of x^(32 - j), i.e. reflect32(k) << 1 for k = x^n mod P. With that
// layout PCLMULQDQ of a lane (bit i = x^(63 - i)) by c(k) gives a 128-bit register in the block
// layout above holding H(x) k(x) x^32. Hence:
//
// Folding. Moving a block D bits further along the message multiplies it by x^D. Since
// (H x^64 + L) x^D = H x^(D+64) + L x^D == H (x^(D+32) mod P) x^32 + L (x^(D-32) mod P) x^32
// (mod P), a block folds over D bits with two multiplications by c(x^(D+32) mod P) (lane 0)
// and c(x^(D-32) mod P) (lane 1); XORing the 128-bit products into the block D bits later keeps
// the running value congruent to the message so far, modulo P, at that position. D is 512 for
// the main loop (four registers, 64 bytes per step), 1024 in the 256-bit loop (four 32-byte
// registers), 256 to merge 256-bit registers, 128 to merge 128-bit ones.
//
// The tail. The 1 to 15 bytes after the last whole block are handled without a bytewise loop:
// the register R and the r tail bytes form a (16 + r)-byte stream; its first r bytes are R
// shifted into a zero-padded block, folded over 128 bits, onto a block of the other 16 - r
// bytes of R followed by the tail, which is the last 16 bytes of the buffer re-read.
//
// Reduction. With R = H x^64 + L the CRC is R x^32 mod P:
//   1. S = H (x^96 mod P) + L x^32           (96 bits, one multiplication)
//   2. T = S_hi (x^64 mod P) + S_lo          (64 bits: S_hi is S's top 32 bits)
//   3. Barrett: q = floor(floor(T / x^32) mu / x^32) with mu = floor(x^64 / P), and
//      T mod P = T + q P. Over GF(2) and with deg T < 64 this is exact, no correction step.
// The constants below come from tools/crc32-fold-constants.py, which derives them with plain
// polynomial arithmetic and checks a bit-exact model of this file's steps against zlib.crc32.
//
// Inputs under 16 bytes, and CPUs without PCLMULQDQ, take a bitwise loop: correct but slow; the
// Swift side sends short buffers and other CPUs to zlib instead.

#include "ccrc32.h"

#include <stdint.h>

// The reflected polynomial, for the bitwise loop.
#define MKV_CRC32_POLY_REFLECTED 0xEDB88320u

static uint32_t crc32_bitwise(uint32_t crc, const unsigned char *p, size_t n) {
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = (crc >> 1) ^ (MKV_CRC32_POLY_REFLECTED & (0u - (crc & 1u)));
        }
    }
    return ~crc;
}

#if defined(__x86_64__)

#include <immintrin.h>

// c(k) = reflect32(k) << 1 for each k below (see the file comment).
#define K_X1056 0x1e88ef372ull  // x^(1024+32) mod P: 256-bit loop, lane 0
#define K_X992 0x14a7fe880ull  // x^(1024-32) mod P: 256-bit loop, lane 1
#define K_X544 0x154442bd4ull  // x^(512+32) mod P: 4 x 128-bit loop, lane 0
#define K_X480 0x1c6e41596ull  // x^(512-32) mod P: 4 x 128-bit loop, lane 1
#define K_X288 0x0f1da05aaull  // x^(256+32) mod P: merging 256-bit registers, lane 0
#define K_X224 0x15a546366ull  // x^(256-32) mod P: merging 256-bit registers, lane 1
#define K_X160 0x1751997d0ull  // x^(128+32) mod P: one 128-bit fold, lane 0
#define K_X96 0x0ccaa009eull  // x^(128-32) mod P: one 128-bit fold, lane 1; also reduction step 1
#define K_X64 0x163cd6124ull  // x^64 mod P: reduction step 2
#define K_MU 0x1f7011641ull  // floor(x^64 / P): Barrett quotient
#define K_POLY 0x1db710641ull  // P itself (degree 32, so bit 0 is set)

#define FOLD_TARGET __attribute__((target("pclmul,sse4.1")))
#define WIDE_TARGET __attribute__((target("pclmul,sse4.1,avx2,vpclmulqdq")))
#define INLINE static inline __attribute__((always_inline))

// The 256-bit path needs 128 bytes to load its four registers; measured on a Zen 3 EPYC it is
// already as fast as the 128-bit path there and about twice as fast from 256 bytes on (both
// widths run one PCLMULQDQ per 2 cycles, so twice the bytes per instruction is twice the speed).
#define WIDE_MIN_LENGTH 128

// Byte-shift masks for PSHUFB: 16 bytes from offset r pick byte i - (16 - r) or zero (a shift
// towards lane 1 by 16 - r bytes); from offset 16 + r they pick byte i + r or zero (a shift
// towards lane 0 by r bytes), with the high bit set exactly on the bytes that became zero.
static const unsigned char shift_table[48] = {
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
    0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f,
    0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
};

FOLD_TARGET INLINE __m128i load128(const unsigned char *p) {
    return _mm_loadu_si128((const __m128i *)(const void *)p);
}

// x * x^D mod P in block layout, for k = (c(x^(D+32) mod P), c(x^(D-32) mod P)).
FOLD_TARGET INLINE __m128i fold128(__m128i x, __m128i k) {
    return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

// The 32-bit CRC register (before the exit complement) of the message whose running value is r.
FOLD_TARGET INLINE uint32_t reduce128(__m128i r) {
    const __m128i k = _mm_set_epi64x((long long)K_X64, (long long)K_X96);
    const __m128i barrett = _mm_set_epi64x((long long)K_POLY, (long long)K_MU);
    const __m128i bits32to63 = _mm_set_epi32(0, 0, -1, 0);
    // 1. S = H (x^96 mod P) + L x^32: the product lands in bits 0..95 (bit t = x^(95 - t)),
    //    and L x^32 is lane 1 moved down to bits 0..63.
    __m128i s = _mm_xor_si128(_mm_clmulepi64_si128(r, k, 0x00), _mm_srli_si128(r, 8));
    // 2. T = S_hi (x^64 mod P) + S_lo: S_hi (bits 0..31) moved to bits 32..63 multiplies into
    //    bits 33..95; T is then bits 32..95, bits 0..31 still hold S_hi and are ignored below.
    __m128i t = _mm_xor_si128(_mm_clmulepi64_si128(_mm_slli_epi64(s, 32), k, 0x10), s);
    // 3. Barrett: floor(T / x^32) is bits 32..63; times mu, its degrees 63..32 (bits 32..63) are
    //    q; q P cancels T's degrees 63..32, leaving T mod P in bits 64..95 (bit 64 + i = x^(31 - i)),
    //    which is the reflected CRC register as it is.
    __m128i q = _mm_clmulepi64_si128(_mm_and_si128(t, bits32to63), barrett, 0x00);
    q = _mm_and_si128(q, bits32to63);
    __m128i z = _mm_xor_si128(_mm_clmulepi64_si128(q, barrett, 0x10), t);
    return (uint32_t)_mm_extract_epi32(z, 2);
}

// Folds the remaining whole 16-byte blocks of [p, end) into x, then the 0 to 15 byte tail, and
// returns zlib's CRC value. The buffer holds at least 16 bytes before end (x came from them).
FOLD_TARGET INLINE uint32_t finish(__m128i x, const unsigned char *p, const unsigned char *end) {
    const __m128i k128 = _mm_set_epi64x((long long)K_X96, (long long)K_X160);
    while (end - p >= 16) {
        x = _mm_xor_si128(fold128(x, k128), load128(p));
        p += 16;
    }
    size_t rest = (size_t)(end - p);
    if (rest != 0) {
        const __m128i head_mask = load128(shift_table + rest);
        const __m128i keep_mask = load128(shift_table + 16 + rest);
        // The stream x[0..15] tail[0..rest-1] as a block of its first `rest` bytes (zero-padded
        // in front, so equal as a polynomial) followed by a block of the last 16 bytes.
        __m128i head = _mm_shuffle_epi8(x, head_mask);
        __m128i keep = _mm_shuffle_epi8(x, keep_mask);
        __m128i last = _mm_blendv_epi8(keep, load128(end - 16), keep_mask);
        x = _mm_xor_si128(fold128(head, k128), last);
    }
    return ~reduce128(x);
}

// length >= 16.
FOLD_TARGET static uint32_t crc32_fold128(uint32_t crc, const unsigned char *p, size_t length) {
    const unsigned char *end = p + length;
    // The entry complement is ~crc XORed into the first 4 bytes.
    __m128i x0 = _mm_xor_si128(load128(p), _mm_cvtsi32_si128((int)~crc));
    p += 16;
    if (end - p >= 48) {
        const __m128i k512 = _mm_set_epi64x((long long)K_X480, (long long)K_X544);
        const __m128i k128 = _mm_set_epi64x((long long)K_X96, (long long)K_X160);
        __m128i x1 = load128(p);
        __m128i x2 = load128(p + 16);
        __m128i x3 = load128(p + 32);
        p += 48;
        // Four independent chains hide PCLMULQDQ's latency: each register folds over the 64
        // bytes the four of them cover.
        while (end - p >= 64) {
            x0 = _mm_xor_si128(fold128(x0, k512), load128(p));
            x1 = _mm_xor_si128(fold128(x1, k512), load128(p + 16));
            x2 = _mm_xor_si128(fold128(x2, k512), load128(p + 32));
            x3 = _mm_xor_si128(fold128(x3, k512), load128(p + 48));
            p += 64;
        }
        x0 = _mm_xor_si128(fold128(x0, k128), x1);
        x0 = _mm_xor_si128(fold128(x0, k128), x2);
        x0 = _mm_xor_si128(fold128(x0, k128), x3);
    }
    return finish(x0, p, end);
}

WIDE_TARGET INLINE __m256i load256(const unsigned char *p) {
    return _mm256_loadu_si256((const __m256i *)(const void *)p);
}

// fold128 on both 128-bit lanes at once.
WIDE_TARGET INLINE __m256i fold256(__m256i y, __m256i k) {
    return _mm256_xor_si256(_mm256_clmulepi64_epi128(y, k, 0x00), _mm256_clmulepi64_epi128(y, k, 0x11));
}

// length >= WIDE_MIN_LENGTH >= 128.
WIDE_TARGET static uint32_t crc32_fold256(uint32_t crc, const unsigned char *p, size_t length) {
    const unsigned char *end = p + length;
    const __m256i k1024 = _mm256_set_epi64x((long long)K_X992, (long long)K_X1056, (long long)K_X992,
                                            (long long)K_X1056);
    const __m256i k256 = _mm256_set_epi64x((long long)K_X224, (long long)K_X288, (long long)K_X224,
                                           (long long)K_X288);
    const __m128i k128 = _mm_set_epi64x((long long)K_X96, (long long)K_X160);
    __m256i y0 = _mm256_xor_si256(load256(p), _mm256_setr_epi32((int)~crc, 0, 0, 0, 0, 0, 0, 0));
    __m256i y1 = load256(p + 32);
    __m256i y2 = load256(p + 64);
    __m256i y3 = load256(p + 96);
    p += 128;
    // Each 128-bit lane of the four registers folds over the 128 bytes they cover.
    while (end - p >= 128) {
        y0 = _mm256_xor_si256(fold256(y0, k1024), load256(p));
        y1 = _mm256_xor_si256(fold256(y1, k1024), load256(p + 32));
        y2 = _mm256_xor_si256(fold256(y2, k1024), load256(p + 64));
        y3 = _mm256_xor_si256(fold256(y3, k1024), load256(p + 96));
        p += 128;
    }
    // Merge the registers 32 bytes apart, then the two lanes of the last one, 16 bytes apart.
    y1 = _mm256_xor_si256(fold256(y0, k256), y1);
    y2 = _mm256_xor_si256(fold256(y1, k256), y2);
    y3 = _mm256_xor_si256(fold256(y2, k256), y3);
    __m128i x = _mm_xor_si128(fold128(_mm256_castsi256_si128(y3), k128), _mm256_extracti128_si256(y3, 1));
    return finish(x, p, end);
}

// 0 unknown, else 1 + the widest path: 1 none, 2 128-bit, 3 256-bit. Racing first calls store
// the same value.
static int detected_level;

static int level(void) {
    int cached = __atomic_load_n(&detected_level, __ATOMIC_RELAXED);
    if (cached != 0) {
        return cached - 1;
    }
    __builtin_cpu_init();
    int found = 0;
    if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
        found = 1;
        // The AVX2 check includes the OS saving the YMM state.
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("vpclmulqdq")) {
            found = 2;
        }
    }
    __atomic_store_n(&detected_level, found + 1, __ATOMIC_RELAXED);
    return found;
}

#else  // !defined(__x86_64__)

static int level(void) { return 0; }

#endif

int mkv_crc32_fold_available(void) { return level() >= 1; }

int mkv_crc32_fold_width(void) {
    static const int widths[] = {0, 128, 256};
    return widths[level()];
}

uint32_t mkv_crc32_fold_limited(uint32_t crc, const void *data, size_t length, int max_width) {
    const unsigned char *p = (const unsigned char *)data;
    if (length == 0) {
        return crc;
    }
#if defined(__x86_64__)
    int found = level();
    if (length >= WIDE_MIN_LENGTH && found >= 2 && max_width >= 256) {
        return crc32_fold256(crc, p, length);
    }
    if (length >= 16 && found >= 1 && max_width >= 128) {
        return crc32_fold128(crc, p, length);
    }
#else
    (void)max_width;
#endif
    return crc32_bitwise(crc, p, length);
}

uint32_t mkv_crc32_fold(uint32_t crc, const void *data, size_t length) {
    return mkv_crc32_fold_limited(crc, data, length, 256);
}
