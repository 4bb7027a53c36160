// Atomic operations on words in shared mappings, and the futex system call, for the
// shared-memory inter-process lock (MappedKVIO's SharedMemoryLock). Swift's Synchronization
// atomics cannot be placed over bytes of a file mapping, and `syscall(2)` is variadic, which
// Swift cannot call: these few inline functions are the whole bridge.
#ifndef CFUTEX_H
#define CFUTEX_H

#include <errno.h>
#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/// Loads the 64-bit word at `word` (sequentially consistent).
static inline uint64_t cfutex_load(const uint64_t *word) { return __atomic_load_n(word, __ATOMIC_SEQ_CST); }

/// Stores `value` at `word` (sequentially consistent).
static inline void cfutex_store(uint64_t *word, uint64_t value) { __atomic_store_n(word, value, __ATOMIC_SEQ_CST); }

/// Replaces the word with `desired` if it holds `expected`; returns 1 on success, 0 otherwise.
static inline int cfutex_compare_exchange(uint64_t *word, uint64_t expected, uint64_t desired) {
    return __atomic_compare_exchange_n(word, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/// Stores `value` and returns what the word held before (sequentially consistent).
static inline uint64_t cfutex_exchange(uint64_t *word, uint64_t value) {
    return __atomic_exchange_n(word, value, __ATOMIC_SEQ_CST);
}

/// Sleeps while the 32-bit word at `word` holds `expected`, for at most `timeout_ns` nanoseconds.
/// The futex is not private: it is keyed by the file and offset, so it works across processes.
/// Returns 0 when woken, or an errno (EAGAIN: the word had changed; ETIMEDOUT; EINTR).
static inline int cfutex_wait(uint32_t *word, uint32_t expected, int64_t timeout_ns) {
    struct timespec timeout = {.tv_sec = timeout_ns / 1000000000, .tv_nsec = timeout_ns % 1000000000};
    long result = syscall(SYS_futex, word, FUTEX_WAIT, expected, &timeout, NULL, 0);
    return result == 0 ? 0 : errno;
}

/// Wakes up to `count` processes sleeping on the 32-bit word at `word`.
static inline void cfutex_wake(uint32_t *word, int count) { (void)syscall(SYS_futex, word, FUTEX_WAKE, count, NULL, NULL, 0); }

/// A hint to the processor that this is a spin-wait loop.
static inline void cfutex_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
