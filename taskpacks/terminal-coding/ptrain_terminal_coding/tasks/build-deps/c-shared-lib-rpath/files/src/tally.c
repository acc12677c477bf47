#include "tally.h"

static const char *version = "1.2.0";
static int calls;

void tally_init(tally *t) { t->sum = 0; t->max = 0; t->count = 0; }

void tally_add(tally *t, long value) {
    calls++;
    t->sum += value;
    if (t->count == 0 || value > t->max) t->max = value;
    t->count++;
}

const char *tally_version(void) { return version; }
