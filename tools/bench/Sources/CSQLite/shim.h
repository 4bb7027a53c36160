#ifndef MAPPEDKV_BENCH_CSQLITE_SHIM_H
#define MAPPEDKV_BENCH_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
