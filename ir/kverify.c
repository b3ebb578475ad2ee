/* The kernel-IR verifier (kn_kprog_verify, see kir.h).
 *
 * It walks each kernel with the set of variables in scope: a loop's index inside its
 * body, a local from its declaration to the end of its block. Every variable read or
 * assigned must be in scope, every buffer must be the program's own, a constant index
 * must lie inside its buffer (vector accesses and copies count their whole range),
 * vector lanes must agree between a store, its value and the local a SET assigns,
 * index expressions must be integers and loop extents not negative. The pipeline
 * runs it after every kernel pass in debug builds (KILN_VERIFY=1 in others), so a
 * pass that breaks the IR is named at once instead of miscompiling later. */
#include "ir/kir.h"
#include "targets/target.h"

#include <stdlib.h>
#include <string.h>

typedef struct vctx {
    kn_ctx *cx;
    const kn_kprog *p;
    const kn_kernel *k;
    unsigned char *scope; /* variables in scope */
} vctx;

static kn_status bad(vctx *V, const char *what, long a, long b) {
    return kn_diag(V->cx, NULL, KN_EINTERNAL, "kernel IR of %s: %s (%ld, %ld)", V->k->name, what, a,
                   b);
}

static bool own(const vctx *V, const kn_kbuf *b) {
    return b && b->id >= 0 && b->id < V->p->nbufs && V->p->bufs[b->id] == b;
}

static bool is_int(kn_dtype t) {
    return kn_dtype_get(t)->is_int;
}

/* A constant index range [i, i + n) inside buffer b. */
static kn_status in_bounds(vctx *V, const kn_kbuf *b, const kn_kx *index, int64_t n) {
    if (index->op != KX_CONST) return KN_OK;
    if (index->i < 0 || index->i + n > b->numel)
        return bad(V, "constant index outside its buffer", (long)index->i, (long)b->numel);
    return KN_OK;
}

static kn_status expr(vctx *V, const kn_kx *x) {
    if (!x) return bad(V, "missing expression", 0, 0);
    for (int i = 0; i < 3; i++)
        if (x->a[i] && expr(V, x->a[i])) return V->cx->status;
    switch (x->op) {
    case KX_VAR:
    case KX_LANE: {
        int v = x->op == KX_VAR ? x->var : x->a[0]->var;
        if (v < 0 || v >= V->p->nvars) return bad(V, "unknown variable", v, V->p->nvars);
        if (!V->scope[v]) return bad(V, "variable read out of its scope", v, 0);
        if (x->op == KX_LANE && (x->i < 0 || x->i >= V->p->var_lanes[v]))
            return bad(V, "lane outside its vector", (long)x->i, V->p->var_lanes[v]);
        return KN_OK;
    }
    case KX_LOAD:
        if (!own(V, x->buf)) return bad(V, "load from a buffer of another program", 0, 0);
        if (!is_int(x->a[0]->dtype)) return bad(V, "load index is not an integer", 0, 0);
        if (x->i != 0 && x->i != 4 && x->i != KX_LOAD_KEPT && x->i != KX_LOAD_KEPT_BASE)
            return bad(V, "unknown load kind", (long)x->i, 0);
        if ((x->i == KX_LOAD_KEPT || x->i == KX_LOAD_KEPT_BASE) && kx_lanes(x) != 1)
            return bad(V, "kept load is not a scalar", 0, 0);
        if (x->i == 4 && (kx_lanes(x) != 1 || x->dtype != KN_I32 ||
                          (x->buf->dtype != KN_U8 && x->buf->dtype != KN_I8)))
            return bad(V, "word load is not a scalar i32 of an 8-bit buffer", 0, 0);
        if (x->stride != 0 && (x->stride < 2 || kx_lanes(x) < 2 || x->i != 0))
            return bad(V, "strided load is not a vector with a step of at least 2", x->stride, 0);
        return in_bounds(V, x->buf, x->a[0], kx_load_elems(x));
    case KX_CAST:
        if (x->i != 0 && (x->i != 1 || !kn_dtype_get(x->a[0]->dtype)->is_float ||
                          !kn_dtype_get(x->dtype)->is_int))
            return bad(V, "in-range cast is not from a float to an integer", (long)x->i, 0);
        return KN_OK;
    case KX_STR:
        if (!own(V, x->buf)) return bad(V, "string of another program's buffer", 0, 0);
        return KN_OK;
    case KX_DOT:
        if (x->i == KN_DOT_S8X16) {
            for (int i = 0; i < 3; i++)
                if (x->a[i]->dtype != KN_I32 || kx_lanes(x->a[i]) != (i ? 4 : 1))
                    return bad(V, "s8x16 dot operand is not a scalar i32 and two 4-lane words", i,
                               0);
            return kx_lanes(x) == 1 ? KN_OK : bad(V, "s8x16 dot is not one lane", 0, 0);
        }
        for (int i = 0; i < 3; i++)
            if (x->a[i]->dtype != KN_I32 ||
                (kx_lanes(x->a[i]) != 1 && kx_lanes(x->a[i]) != kx_lanes(x)))
                return bad(V, "dot operand is not an i32 word of the dot's lanes", i, 0);
        return (x->i >= 1 && x->i <= 3) || x->i == KN_DOT_S16X2X
                   ? KN_OK
                   : bad(V, "unknown dot product", (long)x->i, 0);
    case KX_UNPACK16:
        if (x->a[0]->dtype != KN_I32) return bad(V, "unpack16 operand is not an i32 word", 0, 0);
        return x->i >= 0 && x->i <= 3 ? KN_OK : bad(V, "unknown unpack16", (long)x->i, 0);
    case KX_REGEX:
        if (!x->buf || !own(V, x->buf) || x->buf->dtype != KN_U8)
            return bad(V, "regex storage is not a u8 buffer of this program", 0, 0);
        if ((x->i >> 1) == KN_RX_MATCH &&
            (!x->a[0] || x->a[0]->dtype != KN_STRING || kx_lanes(x->a[0]) != 1))
            return bad(V, "regex operand is not a scalar string", 0, 0);
        if ((x->i >> 1) == KN_RX_COMPILE && !x->text)
            return bad(V, "regex without a pattern", 0, 0);
        return (x->i >> 1) <= KN_RX_FREE ? KN_OK : bad(V, "unknown regex kind", (long)x->i, 0);
    case KX_QADD:
        if (x->a[0]->dtype != KN_I32 || x->a[1]->dtype != KN_I32 || kx_lanes(x) != 1)
            return bad(V, "qadd operands are not scalar i32", 0, 0);
        return KN_OK;
    case KX_CVTRN:
        if (x->a[0]->dtype != KN_F32 || kx_lanes(x->a[0]) != kx_lanes(x))
            return bad(V, "cvtrn operand is not an f32 of its lanes", 0, 0);
        return KN_OK;
    case KX_SAT:
        if (x->a[0]->dtype != KN_I32 || kx_lanes(x->a[0]) != 1)
            return bad(V, "sat operand is not a scalar i32", 0, 0);
        return (x->i & 31) == 8 || (x->i & 31) == 16 ? KN_OK : bad(V, "unknown sat", (long)x->i, 0);
    default: return KN_OK;
    }
}

static kn_status stmt(vctx *V, const kn_ks *s);

/* A block: locals declared in it leave scope at its end. */
static kn_status block(vctx *V, const kn_ks *s) {
    int *declared = calloc((size_t)s->n + 1, sizeof *declared), nd = 0;
    KN_ASSERT(declared);
    kn_status st = KN_OK;
    for (int i = 0; i < s->n && !st; i++) {
        st = stmt(V, s->body[i]);
        if (!st && s->body[i] && s->body[i]->kind == KS_DECL) declared[nd++] = s->body[i]->var;
    }
    for (int i = 0; i < nd; i++) V->scope[declared[i]] = 0;
    free(declared);
    return st;
}

static kn_status stmt(vctx *V, const kn_ks *s) {
    if (!s) return bad(V, "missing statement", 0, 0);
    switch (s->kind) {
    case KS_BLOCK: return block(V, s);
    case KS_FOR: {
        if (s->ext ? expr(V, s->ext) : s->extent < 0)
            return V->cx->status ? V->cx->status
                                 : bad(V, "negative loop extent", (long)s->extent, 0);
        if (s->var < 0 || s->var >= V->p->nvars) return bad(V, "unknown loop variable", s->var, 0);
        if (V->scope[s->var]) return bad(V, "loop variable already in scope", s->var, 0);
        V->scope[s->var] = 1;
        kn_status st = s->n == 1 ? stmt(V, s->body[0]) : bad(V, "loop without one body", s->n, 0);
        V->scope[s->var] = 0;
        return st;
    }
    case KS_STORE:
        if (!own(V, s->buf)) return bad(V, "store to a buffer of another program", 0, 0);
        if (s->buf->kind == KB_CONST || s->buf->kind == KB_INPUT)
            return bad(V, "store to a constant or an input", s->buf->id, 0);
        if (expr(V, s->index) || expr(V, s->value)) return V->cx->status;
        if (!is_int(s->index->dtype)) return bad(V, "store index is not an integer", 0, 0);
        if (s->word && (kx_lanes(s->value) != 1 || s->value->dtype != KN_I32 ||
                        (s->buf->dtype != KN_U8 && s->buf->dtype != KN_I8)))
            return bad(V, "word store is not a scalar i32 into an 8-bit buffer", 0, 0);
        if (s->stride != 0 && (s->stride < 2 || kx_lanes(s->value) < 2 || s->word))
            return bad(V, "strided store is not a vector with a step of at least 2", s->stride, 0);
        return in_bounds(V, s->buf, s->index, kn_ks_store_elems(s));
    case KS_DECL:
        if (s->var < 0 || s->var >= V->p->nvars) return bad(V, "unknown local", s->var, 0);
        if (V->scope[s->var]) return bad(V, "local declared twice", s->var, 0);
        if (s->value && expr(V, s->value)) return V->cx->status;
        if (s->value && kx_lanes(s->value) > 1 && kx_lanes(s->value) != V->p->var_lanes[s->var])
            return bad(V, "vector local initialized with other lanes", kx_lanes(s->value),
                       V->p->var_lanes[s->var]);
        V->scope[s->var] = 1;
        return KN_OK;
    case KS_SET:
        if (s->var < 0 || s->var >= V->p->nvars || !V->scope[s->var])
            return bad(V, "assignment to a variable out of scope", s->var, 0);
        if (expr(V, s->value)) return V->cx->status;
        if (kx_lanes(s->value) > 1 && kx_lanes(s->value) != V->p->var_lanes[s->var])
            return bad(V, "vector assigned to a local of other lanes", kx_lanes(s->value),
                       V->p->var_lanes[s->var]);
        return KN_OK;
    case KS_IF:
        if (expr(V, s->cond)) return V->cx->status;
        if (s->n < 1 || s->n > 2 || stmt(V, s->body[0]))
            return V->cx->status ? V->cx->status : bad(V, "if without a body", s->n, 0);
        return s->n == 2 && s->body[1] ? stmt(V, s->body[1]) : KN_OK;
    case KS_WHILE:
        if (expr(V, s->cond)) return V->cx->status;
        return s->n == 1 ? stmt(V, s->body[0]) : bad(V, "while without one body", s->n, 0);
    case KS_COPY:
        if (!own(V, s->buf) || !own(V, s->src)) return bad(V, "copy between foreign buffers", 0, 0);
        if (s->buf->kind == KB_CONST || s->buf->kind == KB_INPUT)
            return bad(V, "copy into a constant or an input", s->buf->id, 0);
        if (expr(V, s->index) || expr(V, s->src_index) || expr(V, s->count)) return V->cx->status;
        if (s->count->op == KX_CONST && (in_bounds(V, s->buf, s->index, s->count->i) ||
                                         in_bounds(V, s->src, s->src_index, s->count->i)))
            return V->cx->status;
        return KN_OK;
    case KS_PREFETCH:
        if (!own(V, s->buf)) return bad(V, "prefetch of a buffer of another program", 0, 0);
        if (expr(V, s->index)) return V->cx->status;
        if (!is_int(s->index->dtype)) return bad(V, "prefetch index is not an integer", 0, 0);
        return in_bounds(V, s->buf, s->index, 1);
    }
    return bad(V, "unknown statement kind", (long)s->kind, 0);
}

kn_status kn_kprog_verify(kn_ctx *cx, const kn_kprog *p) {
    vctx V = {.cx = cx, .p = p, .scope = calloc((size_t)p->nvars + 1, 1)};
    KN_ASSERT(V.scope);
    kn_status st = KN_OK;
    for (int i = 0; i < p->nbufs && !st; i++)
        if (p->bufs[i]->id != i)
            st = kn_diag(cx, NULL, KN_EINTERNAL, "kernel IR: buffer %d has id %d", i,
                         p->bufs[i]->id);
        else if (p->bufs[i]->per_thread &&
                 (p->bufs[i]->kind != KB_SCRATCH || p->bufs[i]->alias || p->bufs[i]->copies < 1))
            st = kn_diag(cx, NULL, KN_EINTERNAL,
                         "kernel IR: per-thread buffer %s is not a scratch of its own with "
                         "copies (%d)",
                         p->bufs[i]->name, p->bufs[i]->copies);
    for (int k = 0; k < p->nkernels && !st; k++) {
        V.k = p->kernels[k];
        memset(V.scope, 0, (size_t)p->nvars + 1);
        if (!V.k->body || V.k->body->kind != KS_BLOCK)
            st = bad(&V, "kernel body is not a block", k, 0);
        else
            st = stmt(&V, V.k->body);
    }
    free(V.scope);
    return st;
}
