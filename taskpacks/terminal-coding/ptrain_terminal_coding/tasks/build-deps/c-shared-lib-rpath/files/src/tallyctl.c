#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tally.h"

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--version") == 0) { printf("libtally %s\n", tally_version()); return 0; }
    tally t;
    tally_init(&t);
    for (int i = 1; i < argc; i++) tally_add(&t, strtol(argv[i], NULL, 10));
    printf("sum %ld max %ld\n", t.sum, t.max);
    return 0;
}
