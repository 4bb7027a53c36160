#ifndef MAPPEDKV_CCRC32_H
#define MAPPEDKV_CCRC32_H

#include <stddef.h>
#include <stdint.h>

#if !defined(__clang__) && !defined(_Nullable)
#define _Nullable  // a Clang nullability annotation (for Swift's importer); other compilers ignore it
#endif

#ifdef __cplusplus
extern "C" {
#endif

/// 1 when this CPU runs the carry-less multiplication path (x86-64 with PCLMULQDQ and SSE4.1), else 0.
/// Detected once and cached. When 0, `mkv_crc32_fold` still returns the right value but only through a
/// slow bitwise loop, so callers should use zlib instead.
int mkv_crc32_fold_available(void);

/// The widest folding path this CPU runs: 256 (VPCLMULQDQ with AVX2), 128 (PCLMULQDQ) or 0 (none).
int mkv_crc32_fold_width(void);

/// zlib's `crc32(crc, data, length)`, bit for bit, for every `crc` and every input: continues the
/// CRC-32 (ISO-HDLC, reflected polynomial 0xEDB88320) `crc` over `length` bytes; start with 0.
/// A `length` of 0 returns `crc` unchanged; `data` may be NULL only then.
uint32_t mkv_crc32_fold(uint32_t crc, const void *_Nullable data, size_t length);

/// `mkv_crc32_fold` restricted to paths no wider than `max_width` bits (256, 128 or 0 for the bitwise
/// loop), so that tests and benchmarks reach every path on any CPU. Paths the CPU lacks are skipped.
uint32_t mkv_crc32_fold_limited(uint32_t crc, const void *_Nullable data, size_t length, int max_width);

#ifdef __cplusplus
}
#endif

#endif
