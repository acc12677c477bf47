"""Count the prime numbers less than or equal to N.

Usage: python3 primes.py N
"""

import sys


def is_prime(n):
    if n < 2:
        return False
    for d in range(2, n):
        if n % d == 0:
            return False
    return True


def count_primes(limit):
    return sum(1 for n in range(limit + 1) if is_prime(n))


if __name__ == "__main__":
    print(count_primes(int(sys.argv[1])))
