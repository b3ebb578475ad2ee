/* Lowerings of elementwise operators: one loop nest over the output shape, each
 * input read at its broadcast offset. Unary math maps to one kernel-IR operator;
 * activations with parameters are small expression trees. Arithmetic happens in
 * the output's compute dtype (f16/bf16 in f32). */
#include "ir/kir.h"

#include <math.h>

/* Opens loops over out's shape; returns the flat output index expression. */
static kn_kx *open_loops(kn_lower *L, const kn_kbuf *out, int *vars) {
    kl_for_shape(L, out->rank, out->dims, vars);
    int64_t st[KN_MAX_RANK];
    kn_strides(out->rank, out->dims, st);
    return kx_offset(L, out->rank, vars, st);
}

static kn_kx *load_b(kn_lower *L, kn_kbuf *in, const kn_kbuf *out, const int *vars) {
    return kx_load(L, in, kx_bcast_offset(L, in, out->rank, out->dims, vars));
}

static kn_kx_op unary_op(kn_op op) {
    switch (op) {
    case KN_OP_ABS: return KX_ABS;
    case KN_OP_ACOS: return KX_ACOS;
    case KN_OP_ACOSH: return KX_ACOSH;
    case KN_OP_ASIN: return KX_ASIN;
    case KN_OP_ASINH: return KX_ASINH;
    case KN_OP_ATAN: return KX_ATAN;
    case KN_OP_ATANH: return KX_ATANH;
    case KN_OP_CEIL: return KX_CEIL;
    case KN_OP_COS: return KX_COS;
    case KN_OP_COSH: return KX_COSH;
    case KN_OP_ERF: return KX_ERF;
    case KN_OP_EXP: return KX_EXP;
    case KN_OP_FLOOR: return KX_FLOOR;
    case KN_OP_LOG: return KX_LOG;
    case KN_OP_NEG: return KX_NEG;
    case KN_OP_NOT: return KX_NOT;
    case KN_OP_ROUND: return KX_ROUND;
    case KN_OP_SIN: return KX_SIN;
    case KN_OP_SINH: return KX_SINH;
    case KN_OP_SQRT: return KX_SQRT;
    case KN_OP_TAN: return KX_TAN;
    case KN_OP_TANH: return KX_TANH;
    default: return KX_OP_COUNT;
    }
}

static kn_status lower_unary(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                             kn_kbuf *const *out) {
    int v[KN_MAX_RANK];
    kn_kx *i = open_loops(L, out[0], v);
    kn_kx *x = load_b(L, in[0], out[0], v);
    kl_store(L, out[0], i, kx_un(L, unary_op(n->op), x));
    kl_end_n(L, out[0]->rank);
    return KN_OK;
}

static kn_kx_op binary_op(kn_op op) {
    switch (op) {
    case KN_OP_ADD: return KX_ADD;
    case KN_OP_SUB: return KX_SUB;
    case KN_OP_MUL: return KX_MUL;
    case KN_OP_DIV: return KX_DIV;
    case KN_OP_AND: return KX_LAND;
    case KN_OP_OR: return KX_LOR;
    case KN_OP_XOR: return KX_NE;
    case KN_OP_EQUAL: return KX_EQ;
    case KN_OP_GREATER: return KX_GT;
    case KN_OP_GREATEROREQUAL: return KX_GE;
    case KN_OP_LESS: return KX_LT;
    case KN_OP_LESSOREQUAL: return KX_LE;
    default: return KX_OP_COUNT;
    }
}

static kn_status lower_binary(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    int v[KN_MAX_RANK];
    kn_kx *i = open_loops(L, out[0], v);
    kn_kx *a = load_b(L, in[0], out[0], v), *b = load_b(L, in[1], out[0], v);
    if (n->op == KN_OP_XOR || n->op == KN_OP_AND || n->op == KN_OP_OR) {
        a = kx_cast(L, KN_BOOL, a);
        b = kx_cast(L, KN_BOOL, b);
    }
    kl_store(L, out[0], i, kx_bin(L, binary_op(n->op), a, b));
    kl_end_n(L, out[0]->rank);
    return KN_OK;
}

static kn_status lower_relu(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    (void)n;
    int v[KN_MAX_RANK];
    kn_kx *i = open_loops(L, out[0], v);
    kn_kx *x = load_b(L, in[0], out[0], v);
    kl_store(L, out[0], i, kx_bin(L, KX_MAX, x, kx_const(L, x->dtype, 0)));
    kl_end_n(L, out[0]->rank);
    return KN_OK;
}

const kn_oplower kn_lower_elementwise[] = {
    {KN_OP_ABS, lower_unary},
    {KN_OP_ACOS, lower_unary},
    {KN_OP_ACOSH, lower_unary},
    {KN_OP_ASIN, lower_unary},
    {KN_OP_ASINH, lower_unary},
    {KN_OP_ATAN, lower_unary},
    {KN_OP_ATANH, lower_unary},
    {KN_OP_CEIL, lower_unary},
    {KN_OP_COS, lower_unary},
    {KN_OP_COSH, lower_unary},
    {KN_OP_ERF, lower_unary},
    {KN_OP_EXP, lower_unary},
    {KN_OP_FLOOR, lower_unary},
    {KN_OP_LOG, lower_unary},
    {KN_OP_NEG, lower_unary},
    {KN_OP_NOT, lower_unary},
    {KN_OP_ROUND, lower_unary},
    {KN_OP_SIN, lower_unary},
    {KN_OP_SINH, lower_unary},
    {KN_OP_SQRT, lower_unary},
    {KN_OP_TAN, lower_unary},
    {KN_OP_TANH, lower_unary},
    {KN_OP_RELU, lower_relu},
    {KN_OP_ADD, lower_binary},
    {KN_OP_SUB, lower_binary},
    {KN_OP_MUL, lower_binary},
    {KN_OP_DIV, lower_binary},
    {KN_OP_AND, lower_binary},
    {KN_OP_OR, lower_binary},
    {KN_OP_XOR, lower_binary},
    {KN_OP_EQUAL, lower_binary},
    {KN_OP_GREATER, lower_binary},
    {KN_OP_GREATEROREQUAL, lower_binary},
    {KN_OP_LESS, lower_binary},
    {KN_OP_LESSOREQUAL, lower_binary},
    {KN_OP_COUNT, 0},
};
