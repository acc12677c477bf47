cd /workspace && cat > Makefile <<'MK'
CC = gcc
CFLAGS = -O2 -Wall -Iinclude
VERSION = 1.2.0
SONAME = libtally.so.1

all: out/bin/tallyctl out/include/tally.h

build/tally.o: src/tally.c include/tally.h
	mkdir -p build
	$(CC) $(CFLAGS) -fPIC -c src/tally.c -o build/tally.o

out/lib/libtally.so.$(VERSION): build/tally.o
	mkdir -p out/lib
	$(CC) -shared -Wl,-soname,$(SONAME) -o $@ build/tally.o
	ln -sfn libtally.so.$(VERSION) out/lib/$(SONAME)
	ln -sfn $(SONAME) out/lib/libtally.so

out/bin/tallyctl: src/tallyctl.c include/tally.h out/lib/libtally.so.$(VERSION)
	mkdir -p out/bin
	$(CC) $(CFLAGS) -o $@ src/tallyctl.c -Lout/lib -ltally -Wl,-rpath,'$$ORIGIN/../lib'

out/include/tally.h: include/tally.h
	mkdir -p out/include
	cp include/tally.h $@

clean:
	rm -rf build out

.PHONY: all clean
MK
make && out/bin/tallyctl 3 4 5
