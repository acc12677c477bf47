#ifndef STACK_H
#define STACK_H

#define STACK_MAX 64

typedef struct {
    long items[STACK_MAX];
    int size;
} Stack;

void stack_init(Stack *s);
int stack_push(Stack *s, long value);
int stack_pop(Stack *s, long *value);

#endif
