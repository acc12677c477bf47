#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "geom/poly.h"

int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: geomtool area|perimeter X,Y X,Y X,Y...\n"); return 2; }
    geom_vec pts[128];
    size_t n = 0;
    for (int i = 2; i < argc && n < 128; i++) {
        if (sscanf(argv[i], "%lf,%lf", &pts[n].x, &pts[n].y) != 2) { fprintf(stderr, "bad point %s\n", argv[i]); return 2; }
        n++;
    }
    if (strcmp(argv[1], "area") == 0) printf("%.3f\n", geom_area(pts, n));
    else if (strcmp(argv[1], "perimeter") == 0) printf("%.3f\n", geom_perimeter(pts, n));
    else { fprintf(stderr, "unknown command %s\n", argv[1]); return 2; }
    return 0;
}
