#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stack.h"

/* Evaluate a reverse-Polish expression such as "3 4 + 2 *". Returns 0 on success. */
int rpn_eval(const char *expr, long *result) {
    Stack s;
    char buf[256];
    stack_init(&s);
    strncpy(buf, expr, sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        if (strlen(tok) == 1 && strchr("+-*/", tok[0])) {
            long a, b;
            if (stack_pop(&s, &b) || stack_pop(&s, &a))
                return -1;
            long r = tok[0] == '+' ? a + b : tok[0] == '-' ? a - b : tok[0] == '*' ? a * b : (b ? a / b : 0);
            if (tok[0] == '/' && b == 0)
                return -1;
            stack_push(&s, r);
        } else {
            char *end;
            long v = strtol(tok, &end, 10);
            if (*end != '\0' || stack_push(&s, v))
                return -1;
        }
    }
    if (s.size != 1)
        return -1;
    return stack_pop(&s, result);
}
