#include <math.h>
#include "cstats.h"

double mean(const double *xs, size_t n) {
    double total = 0;
    for (size_t i = 0; i < n; i++) total += xs[i];
    return total / n;
}

double stddev(const double *xs, size_t n) {
    double m = mean(xs, n), acc = 0;
    for (size_t i = 0; i < n; i++) acc += (xs[i] - m) * (xs[i] - m);
    return sqrt(acc / n);
}

double ratio(const double *xs, size_t n) {
    double lo = xs[0], hi = xs[0];
    for (size_t i = 1; i < n; i++) {
        if (xs[i] < lo) lo = xs[i];
        if (xs[i] > hi) hi = xs[i];
    }
    return hi / lo;
}
