#ifndef GEOM_POLY_H
#define GEOM_POLY_H

#include <stddef.h>
#include "geom/vec.h"

double geom_area(const geom_vec *pts, size_t n);
double geom_perimeter(const geom_vec *pts, size_t n);

#endif
