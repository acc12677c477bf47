#ifndef CSTATS_H
#define CSTATS_H

#include <stddef.h>

int cstats_verbose = 0;

double mean(const double *xs, size_t n);
double stddev(const double *xs, size_t n);
void print_values(const double *xs, size_t n);

#endif
