cat > /workspace/primes.py <<'PY'
"""Count the prime numbers less than or equal to N.

Usage: python3 primes.py N
"""

import sys


def count_primes(limit):
    if limit < 2:
        return 0
    sieve = bytearray([1]) * (limit + 1)
    sieve[0] = sieve[1] = 0
    for p in range(2, int(limit ** 0.5) + 1):
        if sieve[p]:
            sieve[p * p :: p] = bytes(len(range(p * p, limit + 1, p)))
    return sum(sieve)


if __name__ == "__main__":
    print(count_primes(int(sys.argv[1])))
PY
