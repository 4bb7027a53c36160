// The floor of a 1 MiB cache get: what reading a whole file costs, against reading it with the
// CRC-32 check a DiskCache get must make, on files the page cache holds.
//
// Each of 50 files holds a 6-byte header and 1 MiB of value. Per file, each way opens it, reads the
// value into a fresh buffer and closes it:
//   read whole            fstat and one read of the value (the bench's plain-file peer)
//   read whole, halves    the same, of files written in two pwrites of half the file each (as
//                         DiskCache wrote them before): the page cache keeps such a file in
//                         smaller folios, which the read copies out more slowly
//   chunked pread         a 6-byte header pread, fstat and 128 KiB preads, no CRC (the system
//                         calls of the chunked get alone)
//   chunked pread + CRC   the same with each chunk checksummed (CCRC32's folding) while it is cached
//                         (DiskCache's get before the single read)
//   preadv + CRC          one preadv of header, value and a spare byte (a longer file shows as one
//                         more byte read), then the CRC of the whole value (DiskCache's get now)
//   CRC alone             the checksum of a value already in the processor's cache, for scale
//   mmap + copy + CRC     the value mapped, copied out and checksummed 64 KiB at a time (the read's
//                         copy replaced by a mapping; MAP_POPULATE too). For information only: a
//                         mapped file truncated by another process faults with SIGBUS, so the
//                         cache does not map its value files.
//   mmap + copy           the mapping copied out with no CRC: the floor a copy that folds the CRC
//                         as it goes could reach from a mapping (same caveat)
//   mmap + fused copy/CRC the mapping copied out by the 256-bit folding loop itself, each 128 bytes
//                         stored as they are folded: one pass over the value instead of two (same
//                         caveat; x86-64 with VPCLMULQDQ only, the copy is checked against the CRC)
// Runs the ways in turn for 15 rounds and prints, per way, the minimum and the median of the rounds
// in microseconds of CPU time per file, and the median over read whole.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "ccrc32.h"

// CCRC32's folding steps (static there), for the fused copy below: this file is built on its own.
#include "../../Sources/CCRC32/crc32_fold.c"

// The CRC-32 of every file's value, for the fused way to check itself against.
static uint32_t expected_crc;

#if defined(__x86_64__)
// mkv_crc32_fold256 that also stores what it loads at `to`: the copy rides on the CRC's loads.
// length >= 128.
WIDE_TARGET static uint32_t copy_fold256(uint32_t crc, unsigned char *to, const unsigned char *p, size_t length) {
    const unsigned char *end = p + length;
    const __m256i k1024 = _mm256_set_epi64x((long long)K_X992, (long long)K_X1056, (long long)K_X992,
                                            (long long)K_X1056);
    const __m256i k256 = _mm256_set_epi64x((long long)K_X224, (long long)K_X288, (long long)K_X224,
                                           (long long)K_X288);
    const __m128i k128 = _mm_set_epi64x((long long)K_X96, (long long)K_X160);
    __m256i a[4], y[4];
    for (int i = 0; i < 4; i++) {
        a[i] = load256(p + 32 * i);
        _mm256_storeu_si256((__m256i *)(void *)(to + 32 * i), a[i]);
        y[i] = a[i];
    }
    y[0] = _mm256_xor_si256(y[0], _mm256_setr_epi32((int)~crc, 0, 0, 0, 0, 0, 0, 0));
    p += 128;
    to += 128;
    while (end - p >= 128) {
        for (int i = 0; i < 4; i++) {
            a[i] = load256(p + 32 * i);
            _mm256_storeu_si256((__m256i *)(void *)(to + 32 * i), a[i]);
            y[i] = _mm256_xor_si256(fold256(y[i], k1024), a[i]);
        }
        p += 128;
        to += 128;
    }
    memcpy(to, p, (size_t)(end - p));
    y[1] = _mm256_xor_si256(fold256(y[0], k256), y[1]);
    y[2] = _mm256_xor_si256(fold256(y[1], k256), y[2]);
    y[3] = _mm256_xor_si256(fold256(y[2], k256), y[3]);
    __m128i x = _mm_xor_si128(fold128(_mm256_castsi256_si128(y[3]), k128), _mm256_extracti128_si256(y[3], 1));
    return finish(x, p, end);
}
#endif

enum { files = 50, header = 6, size = 1 << 20, chunk = 128 << 10, rounds = 15, ways = 10 };

// The thread's CPU time (user and system), not the wall clock: on a machine shared with other
// work, time spent waiting for a core is left out, while every system call and copy is counted.
static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/// Reads one file's value the given way; returns something that depends on every byte read, or on
/// the last byte for the ways without a CRC.
static unsigned read_file(const char *path, int way, unsigned char *resident) {
    if (way == 7) way = 0;  // the same read of the other files
    int check = way != 8;
    if (way == 8) way = 5;  // mmap + copy, without the CRC
    int fused = way == 9;
    if (fused) way = 5;
    int fd = open(path, O_RDONLY);
    if (fd < 0) exit(1);
    unsigned char *buffer = malloc(size);
    if (buffer == NULL) exit(1);
    unsigned result = 0;
    struct stat status;
    unsigned char head[header];
    if (way == 0) {
        fstat(fd, &status);
        if (pread(fd, buffer, size, header) != size) exit(1);
        result = buffer[size - 1];
    } else if (way == 1 || way == 2) {
        if (pread(fd, head, header, 0) != header) exit(1);
        fstat(fd, &status);
        for (size_t at = 0; at < size; at += chunk) {
            if (pread(fd, buffer + at, chunk, header + at) != chunk) exit(1);
            if (way == 2) result = mkv_crc32_fold(result, buffer + at, chunk);
        }
        if (way == 1) result = buffer[size - 1];
    } else if (way == 3) {
        unsigned char spare;
        struct iovec parts[3] = {{head, header}, {buffer, size}, {&spare, 1}};
        if (preadv(fd, parts, 3, 0) != header + size) exit(1);
        result = mkv_crc32_fold(0, buffer, size);
    } else if (way == 4) {
        result = mkv_crc32_fold(0, resident, size);
    } else {
        int flags = MAP_SHARED | (way == 6 ? MAP_POPULATE : 0);
        unsigned char *mapped = mmap(NULL, size + header, PROT_READ, flags, fd, 0);
        if (mapped == MAP_FAILED) exit(1);
        if (fused) {
#if defined(__x86_64__)
            if (mkv_crc32_fold_width() < 256) exit(4);
            result = copy_fold256(0, buffer, mapped + header, size);
            // The loads folded are the value's; the stores, spot-checked (a whole compare would be
            // timed too).
            if (result != expected_crc || buffer[0] != resident[header] || buffer[size / 2 + 77] != resident[header + size / 2 + 77] ||
                buffer[size - 1] != resident[header + size - 1])
                exit(5);
#else
            exit(4);
#endif
        } else {
            for (size_t at = 0; at < size; at += 64 << 10) {
                memcpy(buffer + at, mapped + header + at, 64 << 10);
                if (check) result = mkv_crc32_fold(result, buffer + at, 64 << 10);
            }
        }
        if (!check) result = buffer[size - 1];
        munmap(mapped, size + header);
    }
    free(buffer);
    close(fd);
    return result;
}

int main(void) {
    char directory[] = "/tmp/large-read-XXXXXX";
    if (mkdtemp(directory) == NULL) return 1;
    char paths[files][64], halves[files][64];
    unsigned char *resident = malloc(size + header);
    if (resident == NULL) return 1;
    for (int i = 0; i < size + header; i++) resident[i] = (unsigned char)rand();
    expected_crc = mkv_crc32_fold(0, resident + header, size);
    for (int i = 0; i < files; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%d", directory, i);
        int fd = open(paths[i], O_CREAT | O_WRONLY | O_TRUNC, 0644);
        if (fd < 0 || write(fd, resident, size + header) != size + header) return 1;
        close(fd);
        snprintf(halves[i], sizeof halves[i], "%s/halves-%d", directory, i);
        fd = open(halves[i], O_CREAT | O_WRONLY | O_TRUNC, 0644);
        int half = (size + header) / 2;
        if (fd < 0 || pwrite(fd, resident, half, 0) != half ||
            pwrite(fd, resident + half, size + header - half, half) != size + header - half)
            return 1;
        close(fd);
    }
    const char *names[ways] = {"read whole",   "chunked pread",     "chunked pread + CRC",       "preadv + CRC",
                               "CRC alone",    "mmap + copy + CRC", "mmap populate + copy + CRC",
                               "read whole, halves", "mmap + copy",       "mmap + fused copy/CRC"};
    double times[ways][rounds];
    unsigned sink = 0;
    for (int round = 0; round < rounds; round++) {
        for (int way = 0; way < ways; way++) {
            double start = now_us();
            for (int i = 0; i < files; i++) sink += read_file(way == 7 ? halves[i] : paths[i], way, resident);
            times[way][round] = (now_us() - start) / files;
        }
    }
    for (int way = 0; way < ways; way++) qsort(times[way], rounds, sizeof(double), compare);
    printf("way\tmin us\tmedian us per 1 MiB file\tmedian over read whole\n");
    for (int way = 0; way < ways; way++) {
        double median = times[way][rounds / 2];
        printf("%s\t%.1f\t%.1f\t%.2fx\n", names[way], times[way][0], median, median / times[0][rounds / 2]);
    }
    for (int i = 0; i < files; i++) {
        unlink(paths[i]);
        unlink(halves[i]);
    }
    rmdir(directory);
    return sink == 42 ? 2 : 0;  // keeps the results alive
}
