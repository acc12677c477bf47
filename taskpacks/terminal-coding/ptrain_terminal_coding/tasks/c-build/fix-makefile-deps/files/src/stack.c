#include "stack.h"

void stack_init(Stack *s) {
    s->size = 0;
}

int stack_push(Stack *s, long value) {
    if (s->size >= STACK_MAX)
        return -1;
    s->items[s->size++] = value;
    return 0;
}

int stack_pop(Stack *s, long *value) {
    if (s->size == 0)
        return -1;
    *value = s->items[--s->size];
    return 0;
}
