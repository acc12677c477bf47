cd /workspace && cat > Makefile <<'MK'
CC = gcc
CFLAGS = -Wall -O2
CPPFLAGS = -Ilib/include
PREFIX ?= /usr/local
DESTDIR ?=

LIB_SRCS = $(wildcard lib/src/*.c)
LIB_OBJS = $(patsubst lib/src/%.c,build/%.o,$(LIB_SRCS))
HEADERS = $(wildcard lib/include/geom/*.h)

all: bin/geomtool

bin/geomtool: build/main.o build/libgeom.a
	mkdir -p bin
	$(CC) $(CFLAGS) -o $@ build/main.o -Lbuild -lgeom -lm

build/main.o: app/main.c $(HEADERS)
	mkdir -p build
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

build/%.o: lib/src/%.c $(HEADERS)
	mkdir -p build
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

build/libgeom.a: $(LIB_OBJS)
	rm -f $@
	ar rcs $@ $(LIB_OBJS)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include/geom
	install -m 755 bin/geomtool $(DESTDIR)$(PREFIX)/bin/geomtool
	install -m 644 build/libgeom.a $(DESTDIR)$(PREFIX)/lib/libgeom.a
	install -m 644 $(HEADERS) $(DESTDIR)$(PREFIX)/include/geom/

clean:
	rm -rf build bin

.PHONY: all install clean
MK
make && bin/geomtool area 0,0 4,0 4,3
