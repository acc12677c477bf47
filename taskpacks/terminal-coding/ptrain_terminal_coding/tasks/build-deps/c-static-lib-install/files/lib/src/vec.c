#include <math.h>
#include "geom/vec.h"

geom_vec geom_sub(geom_vec a, geom_vec b) { geom_vec r = {a.x - b.x, a.y - b.y}; return r; }
double geom_cross(geom_vec a, geom_vec b) { return a.x * b.y - a.y * b.x; }
double geom_length(geom_vec a) { return sqrt(a.x * a.x + a.y * a.y); }
