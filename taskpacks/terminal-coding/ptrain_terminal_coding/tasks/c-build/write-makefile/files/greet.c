#include <stdio.h>

#include "greet.h"

void greet(const char *name) {
    printf("Greetings, %s.\n", name);
}
