/* Group-private interface of ir/ops/binary.c, shared with its lowering
 * (ir/lower/elementwise.c): the ops served by the binary table, the attribute that
 * picks an op's variant, and the opset <= 6 broadcast forms. */
#ifndef KN_OPS_BINARY_ATTRS_H
#define KN_OPS_BINARY_ATTRS_H

#include "ir/ops.h"

/* The binary and variadic ops, comma-separated (for tables): rows of ir/ops/binary.c's
 * table, one infer/eval and one lowering serving them all. */
#define KN_BINARY_OPS(X)                                                                           \
    X(ADD), X(AND), X(BITSHIFT), X(DIV), X(EQUAL), X(GREATER), X(GREATEROREQUAL), X(LESS),         \
        X(LESSOREQUAL), X(MAX), X(MEAN), X(MIN), X(MOD), X(MUL), X(OR), X(POW), X(PRELU), X(SUB),  \
        X(SUM), X(XOR), X(BITWISEAND), X(BITWISEOR), X(BITWISEXOR)

/* The variant of n: Mod's fmod (0 or 1), BitShift's direction (1 for RIGHT), else 0.
 * Reports a value out of range. */
kn_status kn_binary_variant(kn_ctx *cx, const kn_node *n, int *variant);

/* *v = the type input 1 (type b) broadcasts as against input 0 (type a): b itself, or
 * for opset <= 6 forms (broadcast=1 with axis; PRelu's 1-D per-channel slope) b with
 * 1-dims added so that it starts at the legacy axis of a. v->rank is -1 when a rank
 * needed is unknown. Reports an axis that does not fit. */
kn_status kn_binary_legacy_view(kn_ctx *cx, const kn_node *n, const kn_type *a, const kn_type *b,
                                kn_type *v);

#endif
