#ifndef GEOM_VEC_H
#define GEOM_VEC_H

typedef struct { double x, y; } geom_vec;

geom_vec geom_sub(geom_vec a, geom_vec b);
double geom_cross(geom_vec a, geom_vec b);
double geom_length(geom_vec a);

#endif
