cd /workspace && sed -i 's/long power(long base, unsigned exp)/long power(long base, int exp)/; s/result \*= base$/result *= base;/' mathops.c && make
