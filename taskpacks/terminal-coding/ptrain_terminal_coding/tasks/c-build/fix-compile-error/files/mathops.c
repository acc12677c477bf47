#include "mathops.h"

long add(long a, long b) {
    return a + b;
}

long mul(long a, long b) {
    return a * b;
}

long power(long base, unsigned exp) {
    long result = 1;
    while (exp-- > 0)
        result *= base
    return result;
}
