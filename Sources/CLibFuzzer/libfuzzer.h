// libFuzzer's driver, linked in by -sanitize=fuzzer (compiler-rt's FuzzerInterface.h).
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
