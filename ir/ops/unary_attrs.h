/* Group-private interface of ir/ops/unary.c, shared with its lowering
 * (ir/lower/elementwise.c): the ops served by the math table and the reading of
 * their attributes, so both sides agree on names and defaults by construction. */
#ifndef KN_OPS_UNARY_ATTRS_H
#define KN_OPS_UNARY_ATTRS_H

#include "ir/ops.h"

/* The math ops, comma-separated (for tables): one row each in ir/ops/unary.c's table,
 * one infer/eval and one lowering serving them all. */
#define KN_UNARY_MATH_OPS(X)                                                                       \
    X(ABS), X(ACOS), X(ACOSH), X(ASIN), X(ASINH), X(ATAN), X(ATANH), X(CEIL), X(CELU), X(COS),     \
        X(COSH), X(ELU), X(ERF), X(EXP), X(FLOOR), X(HARDSIGMOID), X(HARDSWISH), X(ISINF),         \
        X(ISNAN), X(LEAKYRELU), X(LOG), X(NEG), X(NOT), X(RECIPROCAL), X(RELU), X(ROUND), X(SELU), \
        X(SHRINK), X(SIGMOID), X(SIGN), X(SIN), X(SINH), X(SOFTPLUS), X(SOFTSIGN), X(SQRT),        \
        X(TAN), X(TANH), X(THRESHOLDEDRELU), X(GELU), X(MISH), X(BITWISENOT)

/* A numeric attribute given as FLOAT or INT; def if absent. Reports any other kind. */
double kn_attr_num(kn_ctx *cx, const kn_node *n, const char *name, double def);

/* The up to three attributes of math op n (KN_UNARY_MATH_OPS) into p[0..3), in the
 * order its row lists them, with the row's defaults; unused entries are 0. Returns
 * cx->status. */
kn_status kn_unary_params(kn_ctx *cx, const kn_node *n, double *p);

#endif
