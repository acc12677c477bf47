#include <stdio.h>

int main(void) {
    printf("Hello, C!\n");
    return 0;
}
