cd /workspace && cat > Makefile <<'MK'
CC = gcc
CFLAGS = -Wall -Wextra -O2
SRCS = $(wildcard src/*.c)
OBJS = $(patsubst src/%.c,build/%.o,$(SRCS))

stackcalc: $(OBJS)
	$(CC) $(CFLAGS) -o $@ $(OBJS)

build/%.o: src/%.c src/stack.h
	mkdir -p build
	$(CC) $(CFLAGS) -c $< -o $@

test: stackcalc
	./stackcalc --self-test

clean:
	rm -rf stackcalc build

.PHONY: test clean
MK
make
