/* The vmath pass's expansions (passes/vmath.c), for tests and other passes. */
#ifndef KN_VMATH_H
#define KN_VMATH_H

#include "ir/kir.h"

/* The polynomial expansion of x (an f32 KX_EXP, KX_TANH or KX_ERF node, scalar or
 * vector) built with L, or NULL when x is not one the pass rewrites. */
kn_kx *kn_vmath_expand(kn_lower *L, kn_kx *x);

/* Whether f32 division by the constant s is expanded by kn_vmath_div_const: s a positive
 * normal float32 in [2^-64, 2^64]. */
bool kn_vmath_div_const_ok(double s);

/* RN(v / s), the float32 quotient correctly rounded, of the f32 v (scalar or vector) and
 * the constant s (kn_vmath_div_const_ok), with no division: a multiply by r = RN(1 / s)
 * and two exact-residual corrections (kx_fma_exact). The caller keeps |v| <= 2^22 s (a
 * clamp), and v is repeated in the tree (a load or local). passes/vmath.c gives the
 * argument. */
kn_kx *kn_vmath_div_const(kn_lower *L, kn_kx *v, double s);

#endif
