#ifndef MAPPEDKV_BENCH_CRC32_H
#define MAPPEDKV_BENCH_CRC32_H
#include <stddef.h>
#include <stdint.h>

/// MappedKVFormat's `CRC32.update`: zlib's CRC-32 of `length` bytes continued from `crc`, by the
/// folding of the root package's Sources/CCRC32 from 16 bytes on processors that have its
/// instructions, else by zlib's `crc32_z`. The same code as the store's checked reads, compiled here
/// because `CRC32` is `package` and the bench is another package.
uint32_t bench_crc32_update(uint32_t crc, const void *_Nullable data, size_t length);
#endif
