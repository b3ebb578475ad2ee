/* Fused epilogue steps (ir/epilogue.h) as kernel-IR expressions: what the lowerings and
 * the tile pass apply to each value, scalar or vector, before storing it. A step that
 * reads its value more than once first holds it in a local of the value's width, so
 * the expression is computed once. */
#include "ir/epilogue.h"
#include "ir/kir.h"

#include <math.h>

/* v as a local (scalar or vector) unless it is already cheap to repeat. */
static kn_kx *hold(kn_lower *L, kn_kx *v) {
    if (v->op == KX_VAR || v->op == KX_CONST) return v;
    return kx_var(L, kl_decl_vec(L, v->dtype, kx_lanes(v), v));
}

static kn_kx *c(kn_lower *L, const kn_kx *like, double v) {
    return kx_const(L, like->dtype, v);
}

static kn_kx *sigmoid(kn_lower *L, kn_kx *v) {
    kn_kx *e = kx_un(L, KX_EXP, kx_un(L, KX_NEG, v));
    return kx_bin(L, KX_DIV, c(L, v, 1), kx_add(L, c(L, v, 1), e));
}

/* max(lo, min(hi, v)) with comparisons: a NaN v stays NaN as in the reference */
static kn_kx *clamp(kn_lower *L, kn_kx *v, double lo, double hi) {
    v = hold(L, v);
    if (lo != -INFINITY)
        v = hold(L, kx_select(L, kx_bin(L, KX_LT, v, c(L, v, lo)), c(L, v, lo), v));
    if (hi != INFINITY) v = kx_select(L, kx_bin(L, KX_GT, v, c(L, v, hi)), c(L, v, hi), v);
    return v;
}

kn_kx *kl_epilogue(kn_lower *L, const kn_epilogue *e, kn_kx *v, kn_kx *const *operands) {
    for (int k = 0; k < e->n; k++) {
        const kn_epi_step *s = &e->s[k];
        switch (s->op) {
        case KN_EPI_RELU: v = clamp(L, v, 0, INFINITY); break;
        case KN_EPI_CLIP: v = clamp(L, v, s->a, s->b); break;
        case KN_EPI_LEAKYRELU:
            v = hold(L, v);
            v = kx_select(L, kx_bin(L, KX_LT, v, c(L, v, 0)), kx_mul(L, c(L, v, s->a), v), v);
            break;
        case KN_EPI_SIGMOID: v = sigmoid(L, v); break;
        case KN_EPI_HARDSIGMOID:
            v = kx_fma(L, c(L, v, s->a), v, c(L, v, s->b));
            v = kx_bin(L, KX_MAX, c(L, v, 0), kx_bin(L, KX_MIN, c(L, v, 1), hold(L, v)));
            break;
        case KN_EPI_HARDSWISH: {
            v = hold(L, v);
            kn_kx *g = kx_fma(L, c(L, v, 1.0 / 6), v, c(L, v, 0.5));
            g = kx_bin(L, KX_MAX, c(L, v, 0), kx_bin(L, KX_MIN, c(L, v, 1), g));
            v = kx_mul(L, v, g);
            break;
        }
        case KN_EPI_SILU:
            v = hold(L, v);
            v = kx_mul(L, v, sigmoid(L, v));
            break;
        case KN_EPI_TANH: v = kx_un(L, KX_TANH, v); break;
        case KN_EPI_GELU:
            v = hold(L, v);
            v = kx_mul(L, kx_mul(L, c(L, v, 0.5), v),
                       kx_add(L, c(L, v, 1), kx_un(L, KX_ERF, kx_mul(L, v, c(L, v, M_SQRT1_2)))));
            break;
        case KN_EPI_GELU_TANH: {
            v = hold(L, v);
            kn_kx *cube = kx_mul(L, kx_mul(L, v, v), v);
            kn_kx *in = kx_mul(L, c(L, v, sqrt(2 / M_PI)), kx_fma(L, c(L, v, 0.044715), cube, v));
            v = kx_mul(L, kx_mul(L, c(L, v, 0.5), v), kx_add(L, c(L, v, 1), kx_un(L, KX_TANH, in)));
            break;
        }
        case KN_EPI_ADD: v = kx_add(L, v, operands[k]); break;
        case KN_EPI_MUL: v = kx_mul(L, v, operands[k]); break;
        case KN_EPI_SUB: v = kx_sub(L, v, operands[k]); break;
        case KN_EPI_DIV: v = kx_bin(L, KX_DIV, v, operands[k]); break;
        case KN_EPI_RSUB: v = kx_sub(L, operands[k], v); break;
        case KN_EPI_RDIV: v = kx_bin(L, KX_DIV, operands[k], v); break;
        case KN_EPI_NEG: v = kx_un(L, KX_NEG, v); break;
        case KN_EPI_ABS: v = kx_un(L, KX_ABS, v); break;
        case KN_EPI_EXP: v = kx_un(L, KX_EXP, v); break;
        case KN_EPI_LOG: v = kx_un(L, KX_LOG, v); break;
        case KN_EPI_SQRT: v = kx_un(L, KX_SQRT, v); break;
        case KN_EPI_ERF: v = kx_un(L, KX_ERF, v); break;
        case KN_EPI_RECIP: v = kx_bin(L, KX_DIV, c(L, v, 1), v); break;
        case KN_EPI_POW:
            if (s->a == 1) break;
            if (s->a == 2 || s->a == 3) {
                v = hold(L, v);
                v = s->a == 2 ? kx_mul(L, v, v) : kx_mul(L, kx_mul(L, v, v), v);
            } else {
                v = kx_bin(L, KX_POW, v, c(L, v, s->a));
            }
            break;
        }
    }
    return v;
}

kn_kx *kl_bcast_load(kn_lower *L, kn_kbuf *x, const kn_kbuf *y, kn_kx *const *coord) {
    int64_t xs[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xs);
    kn_kx *off = kx_int(L, 0);
    for (int d = 0; d < y->rank; d++) {
        int xd = d - (y->rank - x->rank);
        if (xd < 0 || x->dims[xd] == 1) continue;
        off = kx_add(L, off, kx_mul(L, coord[d], kx_int(L, xs[xd])));
    }
    return kx_load(L, x, off);
}
