#include <stdio.h>
#include "cstats.h"

void print_values(const double *xs, size_t n) {
    if (!cstats_verbose) return;
    printf("values:");
    for (size_t i = 0; i < n; i++) printf(" %g", xs[i]);
    printf("\n");
}
