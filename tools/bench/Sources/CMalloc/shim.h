#ifndef MAPPEDKV_BENCH_CMALLOC_SHIM_H
#define MAPPEDKV_BENCH_CMALLOC_SHIM_H
#include <malloc.h>
#include <stddef.h>

/// The heap bytes in use now (allocated, not freed-but-kept): glibc's mallinfo2().uordblks, the
/// arena's, plus hblkhd, the blocks glibc gave their own mmap. Large blocks go one way or the other
/// depending on glibc's sliding mmap threshold (raised by every large free), so uordblks alone
/// counts a big array or not by the history of earlier frees.
static inline size_t bench_heap_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}
#endif
