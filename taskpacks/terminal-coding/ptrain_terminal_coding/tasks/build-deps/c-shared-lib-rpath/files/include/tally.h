#ifndef TALLY_H
#define TALLY_H

typedef struct { long sum; long max; int count; } tally;

void tally_init(tally *t);
void tally_add(tally *t, long value);
const char *tally_version(void);

#endif
