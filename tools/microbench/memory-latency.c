// What a get waits for when its key's hash bucket is not in the cache.
//
// 1. The latency of one dependent load at a random 8-byte slot of a table of N MiB (huge pages asked
//    for, as the store asks for its index): the loads follow a random cycle through every slot, each
//    address read from the load before it, so none can overlap another.
// 2. Independent loads at random slots of a 16 MiB table, each followed by some work that does not
//    depend on it, as successive gets are: with little work between them the processor has several
//    loads in flight at once; with about as much work as a get does, it has one, and each load
//    costs the whole latency of 1.
//
//   tools/microbench.sh latency
//   latency --floor      # only 1 for 16 MiB, as `dependent_load_16mib<TAB>ns` (tools/bench-targets.sh)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

/// The next value of a xorshift64 generator.
static uint64_t next_random(uint64_t *state) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

/// A table of `slots` 8-byte slots with huge pages asked for, as the store asks for its index,
/// and a scratch array of `scratch_bytes`; exits if either cannot be had.
static uint64_t *huge_table(size_t slots, size_t scratch_bytes, void **scratch) {
    uint64_t *table = mmap(NULL, slots * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    *scratch = malloc(scratch_bytes);
    if (table == MAP_FAILED || *scratch == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    madvise(table, slots * 8, MADV_HUGEPAGE);
    return table;
}

/// The nanoseconds of one dependent load at random in a table of `mebibytes` MiB.
static double latency(size_t mebibytes) {
    size_t slots = mebibytes * 1024 * 1024 / 8;
    void *scratch;
    uint64_t *table = huge_table(slots, slots * 8, &scratch);
    uint64_t *order = scratch;
    // A random permutation (xorshift, Fisher-Yates), then each slot points to the next in it.
    for (size_t i = 0; i < slots; i++) order[i] = i;
    uint64_t state = 88172645463325252ull;
    for (size_t i = slots - 1; i > 0; i--) {
        size_t j = next_random(&state) % (i + 1);
        uint64_t swap = order[i];
        order[i] = order[j];
        order[j] = swap;
    }
    for (size_t i = 0; i < slots; i++) table[order[i]] = order[(i + 1) % slots];
    size_t steps = 4000000;
    uint64_t at = order[0];
    for (size_t i = 0; i < steps / 4; i++) at = table[at];  // warm up: fault the pages in
    double start = now_ns();
    for (size_t i = 0; i < steps; i++) at = table[at];
    double elapsed = now_ns() - start;
    munmap(table, slots * 8);
    free(order);
    // `at` ends where the cycle took it: printed so that the loads cannot be dropped.
    if (at == (uint64_t)-1) printf("unreachable\n");
    return elapsed / steps;
}

static void measure(size_t mebibytes) {
    printf("%3zu MiB: %6.1f ns per dependent load\n", mebibytes, latency(mebibytes));
}

static void overlap(int work) {
    size_t slots = 16 * 1024 * 1024 / 8;
    size_t steps = 2000000;
    void *scratch;
    uint64_t *table = huge_table(slots, steps * 4, &scratch);
    uint32_t *at = scratch;
    for (size_t i = 0; i < slots; i++) table[i] = i;
    uint64_t state = 88172645463325252ull;
    for (size_t i = 0; i < steps; i++) at[i] = (uint32_t)(next_random(&state) % slots);
    uint64_t sum = 0;
    double start = now_ns();
    for (size_t i = 0; i < steps; i++) {
        uint64_t loaded = table[at[i]];
        // Work that does not depend on the load: a multiply chain of `work` steps (about 4
        // instructions each), kept by the empty asm from being folded away.
        uint64_t h = i;
        for (int k = 0; k < work; k++) {
            h = h * 0x9E3779B97F4A7C15ull + (uint64_t)k;
            __asm__ volatile("" : "+r"(h));
        }
        sum += loaded ^ h;
    }
    double elapsed = now_ns() - start;
    printf("16 MiB, independent loads, about %4d instructions of other work each: %6.1f ns a load (%llu)\n",
        4 * work + 10, elapsed / steps, (unsigned long long)sum);
    munmap(table, slots * 8);
    free(at);
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--floor") == 0) {
        printf("dependent_load_16mib\t%.1f\n", latency(16));
        return 0;
    }
    size_t sizes[] = {1, 4, 16, 32, 64};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) measure(sizes[i]);
    int works[] = {0, 10, 25, 50, 125};
    for (size_t i = 0; i < sizeof works / sizeof works[0]; i++) overlap(works[i]);
    return 0;
}
