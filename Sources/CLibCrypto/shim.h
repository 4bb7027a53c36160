#ifndef MAPPEDKV_CLIBCRYPTO_SHIM_H
#define MAPPEDKV_CLIBCRYPTO_SHIM_H
#define OPENSSL_SUPPRESS_DEPRECATED 1
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/err.h>
#endif
