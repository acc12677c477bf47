#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WORD 64

typedef struct {
    char word[MAX_WORD];
    int count;
} Entry;

static Entry *entries;
static int nentries, capacity;

static void add_word(const char *word) {
    for (int i = 0; i < nentries; i++) {
        if (strcmp(entries[i].word, word) == 0) {
            entries[i].count++;
            return;
        }
    }
    if (nentries == capacity) {
        capacity = capacity ? capacity * 2 : 16;
        entries = realloc(entries, capacity * sizeof *entries);
        if (!entries) {
            perror("realloc");
            exit(1);
        }
    }
    strcpy(entries[nentries].word, word);
    entries[nentries].count = 1;
    nentries++;
}

static int by_count_then_word(const void *a, const void *b) {
    const Entry *x = a, *y = b;
    if (x->count != y->count)
        return y->count - x->count;
    return strcmp(y->word, x->word);
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10;
    char word[MAX_WORD];
    int len = 0, c;

    while ((c = getchar()) != EOF) {
        if (isalpha(c) && c < 128) {
            if (len < MAX_WORD - 1)
                word[len++] = (char)tolower(c);
        } else if (len > 0) {
            word[len] = '\0';
            add_word(word);
            len = 0;
        }
    }

    qsort(entries, nentries, sizeof *entries, by_count_then_word);
    for (int i = 0; i <= n && i < nentries; i++)
        printf("%d %s\n", entries[i].count, entries[i].word);
    free(entries);
    return 0;
}
