// Everything is inline in include/cfutex.h; SwiftPM needs one source file for a C target.
#include "cfutex.h"
