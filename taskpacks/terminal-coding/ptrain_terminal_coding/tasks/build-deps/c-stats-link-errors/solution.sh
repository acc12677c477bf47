cd /workspace && python3 - <<'PY'
from pathlib import Path
h = Path("src/cstats.h")
h.write_text(h.read_text().replace("int cstats_verbose = 0;", "extern int cstats_verbose;")
             .replace("double stddev(const double *xs, size_t n);", "double stddev(const double *xs, size_t n);\ndouble ratio(const double *xs, size_t n);"))
f = Path("src/format.c")
f.write_text(f.read_text().replace('#include "cstats.h"\n', '#include "cstats.h"\n\nint cstats_verbose = 0;\n'))
m = Path("src/main.c")
m.write_text(m.read_text().replace("\nint ratio();\n", ""))
mk = Path("Makefile")
mk.write_text(mk.read_text().replace("$(CC) $(CFLAGS) -o $@ $(OBJS)", "$(CC) $(CFLAGS) -o $@ $(OBJS) -lm"))
PY
make clean && make && ./cstats 2 4 4 4 5 5 7 9
