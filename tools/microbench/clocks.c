// What a cache pays per call to know the time, and to take an uncontended lock.
//
// Prints the nanoseconds of one clock_gettime of each clock the caches can read (the exact wall
// clock DiskCache read until CacheClock.coarse, the coarse wall clock it reads now, the clocks of
// MemoryCacheClock), and of a lock and unlock made of a compare-and-swap and a swap, as an
// uncontended futex-based mutex (Swift's Mutex on Linux) costs. Three rounds of ten million calls.
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

static double elapsed(struct timespec a, struct timespec b) {
    return (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
}

static uint64_t sink;

static void time_clock(const char *name, clockid_t id, int calls) {
    struct timespec start, end, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < calls; i++) {
        clock_gettime(id, &now);
        sink += (uint64_t)now.tv_nsec;
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    struct timespec resolution;
    clock_getres(id, &resolution);
    printf("%-24s %6.1f ns a reading, resolution %ld ns\n", name, elapsed(start, end) / calls,
           resolution.tv_nsec);
}

static void time_lock(int calls) {
    static _Atomic uint32_t word;
    struct timespec start, end;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (int i = 0; i < calls; i++) {
        uint32_t expected = 0;
        atomic_compare_exchange_strong_explicit(&word, &expected, 1, memory_order_acquire, memory_order_relaxed);
        sink += expected;
        atomic_exchange_explicit(&word, 0, memory_order_release);
    }
    clock_gettime(CLOCK_MONOTONIC, &end);
    printf("%-24s %6.1f ns a pair\n", "lock + unlock", elapsed(start, end) / calls);
}

int main(void) {
    const int calls = 10000000;
    for (int round = 0; round < 3; round++) {
        time_clock("CLOCK_REALTIME", CLOCK_REALTIME, calls);
        time_clock("CLOCK_REALTIME_COARSE", CLOCK_REALTIME_COARSE, calls);
        time_clock("CLOCK_BOOTTIME", CLOCK_BOOTTIME, calls);
        time_clock("CLOCK_MONOTONIC_COARSE", CLOCK_MONOTONIC_COARSE, calls);
        time_lock(calls);
        printf("\n");
    }
    return (int)(sink & 0);
}
