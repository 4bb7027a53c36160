#ifndef MAPPEDKV_BENCH_CMALLOC_SHIM_H
#define MAPPEDKV_BENCH_CMALLOC_SHIM_H
#include <malloc.h>
#include <stddef.h>

/// The heap bytes in use now: glibc's mallinfo2().uordblks (allocated, not freed-but-kept).
static inline size_t bench_heap_in_use(void) { return mallinfo2().uordblks; }
#endif
