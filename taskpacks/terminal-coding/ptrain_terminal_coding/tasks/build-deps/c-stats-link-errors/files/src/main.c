#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cstats.h"

int ratio();

int main(int argc, char **argv) {
    double xs[256];
    size_t n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-v") == 0) { cstats_verbose = 1; continue; }
        if (n < 256) xs[n++] = strtod(argv[i], NULL);
    }
    if (n == 0) { fprintf(stderr, "usage: cstats [-v] NUMBER...\n"); return 2; }
    print_values(xs, n);
    printf("count %zu\n", n);
    printf("mean %.3f\n", (double)mean(xs, n));
    printf("stddev %.3f\n", stddev(xs, n));
    printf("ratio %.3f\n", (double)ratio(xs, n));
    return 0;
}
