#ifndef MATHOPS_H
#define MATHOPS_H

long add(long a, long b);
long mul(long a, long b);
long power(long base, int exp);

#endif
