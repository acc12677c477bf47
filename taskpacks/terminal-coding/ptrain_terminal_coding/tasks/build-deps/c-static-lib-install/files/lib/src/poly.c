#include <math.h>
#include "geom/poly.h"

double geom_area(const geom_vec *pts, size_t n) {
    double twice = 0;
    for (size_t i = 0; i < n; i++) twice += geom_cross(pts[i], pts[(i + 1) % n]);
    return fabs(twice) / 2;
}

double geom_perimeter(const geom_vec *pts, size_t n) {
    double total = 0;
    for (size_t i = 0; i < n; i++) total += geom_length(geom_sub(pts[(i + 1) % n], pts[i]));
    return total;
}
