// MappedKVFormat's CRC32.update, for the baselines that time the CRC a checked get pays. crc32_fold.c
// and ccrc32.h are links to the root package's Sources/CCRC32: the same folding code, compiled here
// under other names (Package.swift's defines) so that it does not clash with the copy MappedKV links.

#include "bench_crc32.h"

#include <zlib.h>

#include "ccrc32.h"

uint32_t bench_crc32_update(uint32_t crc, const void *data, size_t length) {
    if (data == NULL || length == 0) return crc;
    // CRC32.foldThreshold: below 16 bytes zlib's table loop is the faster one.
    if (length >= 16 && mkv_crc32_fold_available()) return mkv_crc32_fold(crc, data, length);
    return (uint32_t)crc32_z(crc, data, length);
}
