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

enum { files = 50, header = 6, size = 1 << 20, chunk = 128 << 10, rounds = 15, ways = 9 };

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
        for (size_t at = 0; at < size; at += 64 << 10) {
            memcpy(buffer + at, mapped + header + at, 64 << 10);
            if (check) result = mkv_crc32_fold(result, buffer + at, 64 << 10);
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
                               "read whole, halves", "mmap + copy"};
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
