// The floor of a multi-process write in MMKV's protocol: one uncontended flock(LOCK_EX) and
// flock(LOCK_UN) pair on a file of its own, which every such write takes once. Prints
// `flock_pair<TAB>ns` (the median of 9 timings of 200,000 pairs), for tools/bench-targets.sh.
//
//   cc -O2 tools/microbench/flock-pair.c -o /tmp/flock-pair && /tmp/flock-pair [directory]
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    const char *directory = argc > 1 ? argv[1] : "/tmp";
    char path[4096];
    snprintf(path, sizeof path, "%s/flock-pair.XXXXXX", directory);
    int fd = mkstemp(path);
    if (fd < 0) {
        perror("mkstemp");
        return 1;
    }
    unlink(path);
    enum { pairs = 200000, timings = 9 };
    double ns[timings];
    for (int t = 0; t < timings; t++) {
        double start = now_ns();
        for (int i = 0; i < pairs; i++) {
            if (flock(fd, LOCK_EX) != 0 || flock(fd, LOCK_UN) != 0) {
                perror("flock");
                return 1;
            }
        }
        ns[t] = (now_ns() - start) / pairs;
    }
    qsort(ns, timings, sizeof ns[0], compare);
    printf("flock_pair\t%.1f\n", ns[timings / 2]);
    close(fd);
    return 0;
}
