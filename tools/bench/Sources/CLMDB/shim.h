#ifndef MAPPEDKV_BENCH_CLMDB_SHIM_H
#define MAPPEDKV_BENCH_CLMDB_SHIM_H
#include <lmdb.h>
#endif
