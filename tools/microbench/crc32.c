// CRC-32 throughput: zlib's crc32 against CCRC32's folding, side by side in one process.
// Built and run by tools/microbench.sh; prints the median of 5 rounds per buffer size.

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zlib.h>

#include "ccrc32.h"

static double seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(void) {
    const size_t sizes[] = {16, 100, 4096, 65536, 1 << 20};
    unsigned char *buffer = malloc(1 << 20);
    if (buffer == NULL) return 1;
    for (int i = 0; i < 1 << 20; i++) buffer[i] = (unsigned char)rand();
    unsigned sink = 0;
    printf("size\tzlib ns\tfold ns\tzlib GB/s\tfold GB/s\n");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        long reps = (long)((256UL << 20) / n);
        double zlib[5], fold[5];
        for (int round = 0; round < 5; round++) {
            double start = seconds();
            for (long i = 0; i < reps; i++) sink += (unsigned)crc32(0, buffer, (uInt)n);
            zlib[round] = (seconds() - start) / (double)reps;
            start = seconds();
            for (long i = 0; i < reps; i++) sink += mkv_crc32_fold(0, buffer, n);
            fold[round] = (seconds() - start) / (double)reps;
        }
        qsort(zlib, 5, sizeof zlib[0], compare);
        qsort(fold, 5, sizeof fold[0], compare);
        printf("%zu\t%.0f\t%.0f\t%.2f\t%.2f\n", n, zlib[2] * 1e9, fold[2] * 1e9, n / zlib[2] / 1e9, n / fold[2] / 1e9);
    }
    return sink == 42 ? 2 : 0;  // keeps the loops from being optimized away
}
