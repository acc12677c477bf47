#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mathops.h"

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s add|mul|pow A B\n", argv[0]);
        return 2;
    }
    long a = atol(argv[2]);
    long b = atol(argv[3]);
    if (strcmp(argv[1], "add") == 0)
        printf("%ld\n", add(a, b));
    else if (strcmp(argv[1], "mul") == 0)
        printf("%ld\n", mul(a, b));
    else if (strcmp(argv[1], "pow") == 0)
        printf("%ld\n", power(a, (int)b));
    else {
        fprintf(stderr, "unknown operation: %s\n", argv[1]);
        return 2;
    }
    return 0;
}
