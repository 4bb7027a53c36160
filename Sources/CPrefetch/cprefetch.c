// The prefetch hint is an inline function in include/cprefetch.h; a C target needs one source file.
#include "cprefetch.h"
