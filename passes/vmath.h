/* The vmath pass's expansions (passes/vmath.c), for tests and other passes. */
#ifndef KN_VMATH_H
#define KN_VMATH_H

#include "ir/kir.h"

/* The polynomial expansion of x (an f32 KX_EXP, KX_TANH or KX_ERF node, scalar or
 * vector) built with L, or NULL when x is not one the pass rewrites. */
kn_kx *kn_vmath_expand(kn_lower *L, kn_kx *x);

#endif
