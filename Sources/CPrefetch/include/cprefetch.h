// A cache prefetch hint, for the store's hash index. A prefetch asks the processor to start loading
// a cache line and retires at once, where an ordinary load of a line that misses holds up the
// instructions behind it once the reorder window is full. Swift has no prefetch of its own; this
// inline function is the whole bridge. A prefetch never faults and changes no value: it is a hint.
#ifndef CPREFETCH_H
#define CPREFETCH_H

/// Starts loading the cache line holding `address`, which is about to be read and written.
static inline void cprefetch_for_write(const void *address) { __builtin_prefetch(address, 1, 3); }

#endif
