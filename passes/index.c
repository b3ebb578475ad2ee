/* 32-bit loop indices for targets whose natural integer is 32 bits (kn_target.index_bits).
 * requires: a lowered program; breaks: nothing (sets kn_kprog.index_bits only). Run it
 * last: a pass after it that adds loops or index arithmetic must run it again.
 *
 * Index expressions are i64 in the kernel IR. On a 32-bit microcontroller each i64
 * add, compare or multiply is two to four instructions, so generated C with int64_t
 * loop counters spends much of an inner loop on its index. The C emitter declares loop
 * indices with 32 bits when p->index_bits is 32; C then computes every expression
 * built from loop indices and int-sized constants (printed without INT64_C) with 32
 * bits too, and anything that meets an int64_t operand (a load, a cast, an i64 local,
 * a large constant, the min/max/div/rem/shift helpers) with 64. The narrowed program
 * computes the same values as long as no value computed with 32 bits leaves int32, so
 * the pass checks that by interval arithmetic: each loop index lies in [0, extent),
 * constants are exact, and each add, subtract, multiply, negate and select of such
 * operands must stay within int32, as must every loop extent and buffer size. One
 * value that might not keeps the whole program at 64 bits. */
#include "ir/kir.h"
#include "passes/pass.h"
#include "targets/target.h"

#include <stdint.h>
#include <stdlib.h>

typedef struct {
    kn_kwalker w;
    const kn_kprog *p;
    int64_t *hi; /* per variable: a loop index's largest value, or -1 (not a loop index) */
    bool fail;
} ictx;

#define LO32 (-2147483647LL - 1)
#define HI32 2147483647LL

/* index + lanes - 1 must fit: the C emitter adds the lane (an int) to a vector access's
 * index. */
static void lanes_fit(ictx *c, int64_t hi, int lanes) {
    if (lanes > 1 && hi + lanes - 1 > HI32) c->fail = true;
}

/* x's range: true with [*lo, *hi] where C computes x with 32 bits once loop indices are
 * narrowed, false where it computes x with 64 (or x is not an i64). Every 32-bit
 * value inside x is checked; one that may leave int32 sets c->fail. */
static bool range(ictx *c, const kn_kx *x, int64_t *lo, int64_t *hi) {
    int64_t l[3] = {0}, h[3] = {0};
    bool n[3] = {false};
    for (int i = 0; i < 3; i++)
        if (x->a[i]) n[i] = range(c, x->a[i], &l[i], &h[i]);
    /* a vector load or store reads buf[index + kn_l] for kn_l in [0, lanes) */
    if (x->op == KX_LOAD && n[0])
        lanes_fit(c, h[0], x->stride > 1 ? kx_load_elems(x) : kx_lanes(x));
    /* vector i64 expressions are printed lane by lane with the scalar C operators, so
     * they are checked as scalars: their only 64-bit leaves are vector locals
     * (int64_t arrays, not loop indices) and the 64-bit operations below */
    if (x->dtype != KN_I64) return false;
    switch (x->op) {
    case KX_CONST: /* printed as a plain int literal in this range (codegen/c/cprint.c) */
        if (x->i <= -2147483647 || x->i >= 2147483647) return false;
        *lo = *hi = x->i;
        return true;
    case KX_VAR:
        if (kx_lanes(x) > 1 || c->hi[x->var] < 0) return false; /* an i64 local: int64_t */
        *lo = 0;
        *hi = c->hi[x->var];
        return true;
    case KX_ADD:
    case KX_SUB:
    case KX_MUL:
        if (!n[0] || !n[1]) return false;
        if (x->op == KX_ADD) {
            *lo = l[0] + l[1];
            *hi = h[0] + h[1];
        } else if (x->op == KX_SUB) {
            *lo = l[0] - h[1];
            *hi = h[0] - l[1];
        } else { /* operands within int32: products fit in int64 */
            int64_t p[4] = {l[0] * l[1], l[0] * h[1], h[0] * l[1], h[0] * h[1]};
            *lo = *hi = p[0];
            for (int i = 1; i < 4; i++) {
                if (p[i] < *lo) *lo = p[i];
                if (p[i] > *hi) *hi = p[i];
            }
        }
        break;
    case KX_NEG:
        if (!n[0]) return false;
        *lo = -h[0];
        *hi = -l[0];
        break;
    case KX_BNOT:
        if (!n[0]) return false;
        *lo = -h[0] - 1;
        *hi = -l[0] - 1;
        break;
    case KX_AND:
    case KX_OR:
    case KX_XOR: /* bitwise operations commute with sign extension: within int32 */
        if (!n[0] || !n[1]) return false;
        *lo = LO32;
        *hi = HI32;
        if (x->op == KX_AND && (l[0] >= 0 || l[1] >= 0)) { /* x & m, m >= 0: in [0, m] */
            *lo = 0;
            *hi = l[0] >= 0 && (l[1] < 0 || h[0] < h[1]) ? h[0] : h[1];
        }
        break;
    case KX_SELECT:
        if (!n[1] || !n[2]) return false;
        *lo = l[1] < l[2] ? l[1] : l[2];
        *hi = h[1] > h[2] ? h[1] : h[2];
        break;
    default: /* loads, casts, helper calls (int64_t results) */
        /* an i64 operator this pass does not know, printed as a plain C operator, would
         * compute 32-bit operands with 32 bits: keep 64 bits */
        for (int i = 0; i < 3; i++)
            if (n[i] && x->op != KX_LOAD && x->op != KX_CAST && x->op != KX_MIN &&
                x->op != KX_MAX && x->op != KX_DIV && x->op != KX_MOD && x->op != KX_SHL &&
                x->op != KX_SHR && x->op != KX_ABS)
                c->fail = true;
        return false;
    }
    if (*lo < LO32 || *hi > HI32) c->fail = true;
    return true;
}

static void check(ictx *c, const kn_kx *x) {
    int64_t lo, hi;
    if (x) range(c, x, &lo, &hi);
}

static bool enter(kn_kwalker *w, kn_ks *s) {
    ictx *c = (ictx *)w;
    if (c->fail) return false;
    int64_t lo, hi;
    if (s->kind == KS_STORE && s->index && range(c, s->index, &lo, &hi) && s->value)
        lanes_fit(c, hi, kn_ks_store_elems(s));
    check(c, s->value);
    check(c, s->cond);
    check(c, s->src_index);
    check(c, s->count);
    if (s->kind == KS_FOR) {
        lo = 0;
        hi = s->extent;
        if (s->ext && !range(c, s->ext, &lo, &hi)) c->fail = true; /* unbounded extent */
        if (hi > HI32) c->fail = true;
        c->hi[s->var] = hi > 0 ? hi - 1 : 0;
    }
    return !c->fail;
}

kn_status kn_kpass_index(kn_ctx *cx, kn_kprog *p) {
    (void)cx;
    p->index_bits = 0;
    if (!p->target || p->target->index_bits != 32) return KN_OK;
    if (p->arena_size > (size_t)HI32) return KN_OK;
    for (int i = 0; i < p->nbufs; i++)
        if (p->bufs[i]->numel > HI32) return KN_OK;
    ictx c = {.w = {.enter = enter}, .p = p};
    c.hi = malloc(sizeof *c.hi * ((size_t)p->nvars + 1));
    KN_ASSERT(c.hi);
    for (int v = 0; v < p->nvars; v++) c.hi[v] = -1;
    for (int k = 0; k < p->nkernels && !c.fail; k++) kn_kwalk(&c.w, p->kernels[k]->body);
    free(c.hi);
    if (!c.fail) p->index_bits = 32;
    return KN_OK;
}
