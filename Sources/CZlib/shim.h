#ifndef MAPPEDKV_CZLIB_SHIM_H
#define MAPPEDKV_CZLIB_SHIM_H
#include <zlib.h>
#endif
