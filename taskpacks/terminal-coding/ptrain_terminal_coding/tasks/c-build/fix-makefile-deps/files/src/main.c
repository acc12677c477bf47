#include <stdio.h>
#include <string.h>

#include "stack.h"

int rpn_eval(const char *expr, long *result);

static int self_test(void) {
    struct { const char *expr; long want; } cases[] = {
        {"3 4 +", 7}, {"3 4 + 2 *", 14}, {"10 2 8 * + 3 -", 23}, {"7 2 /", 3},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        long got;
        if (rpn_eval(cases[i].expr, &got) || got != cases[i].want) {
            printf("FAIL %s\n", cases[i].expr);
            failed = 1;
        }
    }
    puts(failed ? "self-test failed" : "self-test passed");
    return failed;
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "--self-test") == 0)
        return self_test();
    if (argc != 2) {
        fprintf(stderr, "usage: %s 'RPN EXPRESSION' | --self-test\n", argv[0]);
        return 2;
    }
    long result;
    if (rpn_eval(argv[1], &result)) {
        fprintf(stderr, "error: bad expression\n");
        return 1;
    }
    printf("%ld\n", result);
    return 0;
}
