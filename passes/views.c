/* Band views: the patch pass's Slices and Concats without their copies (memory plan,
 * step 0a; passes/plan.c calls kn_plan_views before the lifetimes).
 * requires: lowered program, kernel passes done; breaks: nothing.
 *
 * The patch pass (passes/patch.c) runs a CNN's first layers in bands of rows: a Slice
 * takes a band's rows of the chain's input, a Concat joins the bands (and, where bands
 * carry their halo rows, a band's halo to its new rows). In NCHW a band of rows is not
 * one run of memory but one run per (batch, channel) plane, so the plan's contiguous
 * aliases (alias_at, concat_views) cannot place it, and the Slice and the Concat were
 * copies. Here a band becomes a view: a buffer V of dims d with d[ax] = h placed inside
 * a buffer P of dims D (D[ax] = H, the other dims equal) at row a of axis ax. With
 * inner = the product of the dims after ax, V's element i lies at P's element
 *
 *   (i / plane) * pstride + i % plane + base,   plane = h * inner, pstride = H * inner,
 *                                                base = a * inner
 *
 * and every access of V in every kernel is rewritten to one of P at that position:
 * V's index e (with its vector lanes, a word's 4 bytes, a copy's count, a strided
 * access's lanes) must be affine in the kernel's loop indices (scalar locals declared
 * once are followed to their definitions) with every term either a multiple of plane
 * (the "outer" terms: batch, channel, a strided store's channel lanes) or, with the
 * constant's remainder, confined to [0, plane) over the loops' ranges (the "inner"
 * terms: rows and columns). Then e = plane * O + Q with 0 <= Q < plane, and the access
 * becomes P[e + O * (pstride - plane) + base], an outer stride s becoming s / plane *
 * pstride. If one access of V does not decompose so, V keeps its storage and its copy.
 *
 * - A Slice (one axis cut, step 1) whose kernel only copies P into V: V's readers read
 *   P in place and the Slice kernel is emptied.
 * - A Concat part V at offset a along the axis of output C: V's producer (and any other
 *   reader) addresses C, and the Concat's statements copying V are removed.
 *
 * Only on targets of kind mcu (where the patch pass bands), only for V an arena
 * temporary and P an arena temporary, a graph input or output, of the same dtype. A view
 * extends P's lifetime over V's (a Slice's parent lives until the band's last reader of
 * it, a Concat's output from its part's producer on): a view is taken only where the
 * largest total of live bytes of any kernel (the plan's lower bound before the in-place
 * step, each buffer rounded up to the arena alignment) does not grow. */
#include "ir/kir.h"
#include "passes/pass.h"
#include "targets/target.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { AFF_MAX = 32, DECL_DEPTH = 16 };

typedef struct view {
    kn_kbuf *v, *p;
    int64_t plane, pstride, base;
} view;

/* An affine form sum coef[j] * var[j] + k over loop indices. */
typedef struct aff {
    int64_t coef[AFF_MAX], k;
    int var[AFF_MAX], n;
} aff;

/* ---- trials: what a view changes, to undo it ---- */

typedef struct undo_x {
    kn_kx *x, *a0;
    kn_kbuf *buf;
    int stride;
} undo_x;

typedef struct undo_s {
    kn_ks *s;
    kn_kbuf *buf, *src;
    kn_kx *index, *src_index;
    int stride;
} undo_s;

typedef struct undo {
    undo_x *xs;
    undo_s *ss;
    int nx, ns, capx, caps;
    kn_ks *body; /* the kernel body whose statements the view removed */
    kn_ks **stmts;
    int n;
} undo;

static void log_x(undo *U, kn_kx *x) {
    if (U->nx == U->capx) {
        U->capx = U->capx ? 2 * U->capx : 64;
        U->xs = realloc(U->xs, (size_t)U->capx * sizeof *U->xs);
        KN_ASSERT(U->xs);
    }
    U->xs[U->nx++] = (undo_x){x, x->a[0], x->buf, x->stride};
}

static void log_s(undo *U, kn_ks *s) {
    if (U->ns == U->caps) {
        U->caps = U->caps ? 2 * U->caps : 64;
        U->ss = realloc(U->ss, (size_t)U->caps * sizeof *U->ss);
        KN_ASSERT(U->ss);
    }
    U->ss[U->ns++] = (undo_s){s, s->buf, s->src, s->index, s->src_index, s->stride};
}

static void undo_reset(undo *U, kn_ks *body) {
    U->nx = U->ns = 0;
    U->body = body;
    U->n = body->n;
    free(U->stmts);
    U->stmts = malloc(((size_t)body->n + 1) * sizeof *U->stmts);
    KN_ASSERT(U->stmts);
    if (body->n) memcpy(U->stmts, body->body, (size_t)body->n * sizeof *U->stmts);
}

static void undo_apply(undo *U) {
    for (int i = U->nx - 1; i >= 0; i--) {
        undo_x *u = &U->xs[i];
        u->x->a[0] = u->a0;
        u->x->buf = u->buf;
        u->x->stride = u->stride;
    }
    for (int i = U->ns - 1; i >= 0; i--) {
        undo_s *u = &U->ss[i];
        u->s->buf = u->buf;
        u->s->src = u->src;
        u->s->index = u->index;
        u->s->src_index = u->src_index;
        u->s->stride = u->stride;
    }
    U->body->n = U->n;
    if (U->n) memcpy(U->body->body, U->stmts, (size_t)U->n * sizeof *U->stmts);
}

typedef struct vctx {
    kn_kwalker w;
    kn_kprog *p;
    kn_lower *L;
    const view *vw;
    int64_t *ext; /* per variable: the largest static trip count of a loop over it, -1
                     not a loop, -2 a loop with a computed trip count */
    kn_kx **decl; /* per variable: the value of its declaration */
    int *nset;    /* per variable: declarations and assignments */
    bool apply;   /* false: only check; true: rewrite, logging the changes in U */
    undo *U;
    bool bad;
    int n; /* accesses of V seen */
} vctx;

static bool aff_add(aff *A, int var, int64_t c) {
    for (int j = 0; j < A->n; j++)
        if (A->var[j] == var) {
            A->coef[j] += c;
            return true;
        }
    if (A->n == AFF_MAX) return false;
    A->var[A->n] = var;
    A->coef[A->n++] = c;
    return true;
}

/* Adds scale * x to A; false if x is not affine in loop indices (through locals declared
 * once, to depth DECL_DEPTH). */
static bool affx(const vctx *C, const kn_kx *x, int64_t scale, aff *A, int depth) {
    if (!x || kx_lanes(x) > 1) return false;
    switch (x->op) {
    case KX_CONST:
        if (!kn_dtype_get(x->dtype)->is_int) return false;
        A->k += scale * x->i;
        return true;
    case KX_VAR:
        if (C->ext[x->var] >= 0) return aff_add(A, x->var, scale);
        if (C->ext[x->var] == -1 && C->nset[x->var] == 1 && C->decl[x->var] && depth < DECL_DEPTH)
            return affx(C, C->decl[x->var], scale, A, depth + 1);
        return false;
    case KX_ADD: return affx(C, x->a[0], scale, A, depth) && affx(C, x->a[1], scale, A, depth);
    case KX_SUB: return affx(C, x->a[0], scale, A, depth) && affx(C, x->a[1], -scale, A, depth);
    case KX_MUL:
        if (x->a[1]->op == KX_CONST && kn_dtype_get(x->a[1]->dtype)->is_int)
            return affx(C, x->a[0], scale * x->a[1]->i, A, depth);
        if (x->a[0]->op == KX_CONST && kn_dtype_get(x->a[0]->dtype)->is_int)
            return affx(C, x->a[1], scale * x->a[0]->i, A, depth);
        return false;
    case KX_SHL:
        if (x->a[1]->op == KX_CONST && x->a[1]->i >= 0 && x->a[1]->i < 32)
            return affx(C, x->a[0], scale * ((int64_t)1 << x->a[1]->i), A, depth);
        return false;
    case KX_CAST:
        return kn_dtype_get(x->dtype)->is_int && kn_dtype_get(x->a[0]->dtype)->is_int &&
               affx(C, x->a[0], scale, A, depth);
    default: return false;
    }
}

static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The access of V at *index, `span` consecutive elements from it (or, with lanes > 1
 * and *stride > 1, lane k at *index + k * *stride): false if it does not decompose (see
 * the file comment); with C->apply, *index and *stride become P's. */
static bool remap(vctx *C, kn_kx **index, int64_t span, int lanes, int *stride) {
    const view *V = C->vw;
    aff A = {.n = 0};
    if (!affx(C, *index, 1, &A, 0)) return false;
    int64_t kq = floor_div(A.k, V->plane), qlo = A.k - kq * V->plane, qhi = qlo + span - 1;
    int64_t dv[AFF_MAX]; /* per term: its plane multiple, 0 for an inner term */
    for (int j = 0; j < A.n; j++) {
        int64_t c = A.coef[j], e = C->ext[A.var[j]];
        dv[j] = 0;
        if (e <= 1 || c == 0) continue; /* one value: 0 */
        if (c % V->plane == 0)
            dv[j] = c / V->plane;
        else if (c > 0)
            qhi += c * (e - 1);
        else
            qlo += c * (e - 1);
    }
    int ns = stride ? *stride : 0;
    if (lanes > 1 && ns > 1) {
        if (ns % V->plane == 0)
            ns = (int)(ns / V->plane * V->pstride);
        else
            qhi += (int64_t)ns * (lanes - 1);
    }
    if (qlo < 0 || qhi >= V->plane) return false;
    if (!C->apply) return true;
    kn_lower *L = C->L;
    int64_t d = V->pstride - V->plane;
    kn_kx *delta = kx_int(L, kq * d + V->base);
    for (int j = 0; j < A.n; j++)
        if (dv[j]) delta = kx_add(L, delta, kx_mul(L, kx_var(L, A.var[j]), kx_int(L, dv[j] * d)));
    *index = kx_add(L, *index, delta);
    if (stride) *stride = ns;
    return true;
}

static void v_expr(kn_kwalker *w, kn_kx *x) {
    vctx *C = (vctx *)w;
    if ((x->op == KX_STR || x->op == KX_REGEX) && x->buf == C->vw->v) C->bad = true;
    if (x->op != KX_LOAD || x->buf != C->vw->v) return;
    C->n++;
    int lanes = kx_lanes(x), st = x->stride;
    int64_t span = st > 1 ? 1 : x->i == 4 ? 4 : lanes;
    kn_kx *a0 = x->a[0];
    if (!remap(C, &a0, span, lanes, &st)) {
        C->bad = true;
        return;
    }
    if (C->apply) {
        log_x(C->U, x);
        x->a[0] = a0;
        x->buf = C->vw->p;
        x->stride = st;
    }
}

static bool v_enter(kn_kwalker *w, kn_ks *s) {
    vctx *C = (vctx *)w;
    const view *V = C->vw;
    bool ok = true;
    if ((s->kind == KS_STORE || s->kind == KS_PREFETCH) && s->buf == V->v) {
        C->n++;
        int lanes = s->kind == KS_STORE ? kx_lanes(s->value) : 1, st = s->stride;
        int64_t span = s->kind == KS_STORE && s->word ? 4 : st > 1 ? 1 : lanes;
        if (C->apply) log_s(C->U, s);
        ok = remap(C, &s->index, span, lanes, &st);
        if (ok && C->apply) {
            s->buf = V->p;
            s->stride = st;
        }
    }
    if (s->kind == KS_COPY && (s->buf == V->v || s->src == V->v)) {
        C->n++;
        ok = s->count && s->count->op == KX_CONST && s->count->i > 0;
        if (C->apply) log_s(C->U, s);
        if (ok && s->buf == V->v) ok = remap(C, &s->index, s->count->i, 1, NULL);
        if (ok && s->src == V->v) ok = remap(C, &s->src_index, s->count->i, 1, NULL);
        if (ok && C->apply) {
            if (s->buf == V->v) s->buf = V->p;
            if (s->src == V->v) s->src = V->p;
        }
    }
    if (!ok) C->bad = true;
    return true;
}

/* Loop extents, declarations and assignments of every variable of kernel body s. */
typedef struct scan_ctx {
    kn_kwalker w;
    vctx *C;
} scan_ctx;

static bool scan_enter(kn_kwalker *w, kn_ks *s) {
    vctx *C = ((scan_ctx *)w)->C;
    if (s->kind == KS_FOR) {
        int64_t e = s->ext ? -2 : s->extent;
        if (C->ext[s->var] != -2 && (e == -2 || e > C->ext[s->var])) C->ext[s->var] = e;
    }
    if (s->kind == KS_DECL) {
        C->decl[s->var] = s->value;
        C->nset[s->var]++;
    }
    if (s->kind == KS_SET) C->nset[s->var]++;
    return true;
}

static void scan(vctx *C, kn_ks *body) {
    for (int v = 0; v < C->p->nvars; v++) {
        C->ext[v] = -1;
        C->decl[v] = NULL;
        C->nset[v] = 0;
    }
    scan_ctx S = {.w = {.enter = scan_enter}, .C = C};
    kn_kwalk(&S.w, body);
}

/* Checks (apply false) or rewrites (apply true) every access of vw->v in the program but
 * kernel `skip` (the copy the view removes; -1: none). */
static bool view_accesses(vctx *C, const view *vw, int skip, bool apply) {
    C->vw = vw;
    C->apply = apply;
    C->bad = false;
    for (int k = 0; k < C->p->nkernels && !C->bad; k++) {
        if (k == skip) continue;
        kn_kernel *kern = C->p->kernels[k];
        unsigned char *use = calloc((size_t)C->p->nbufs + 1, 1);
        KN_ASSERT(use);
        kn_kernel_uses(kern->body, use);
        bool touches = use[vw->v->id] != 0;
        free(use);
        if (!touches) continue;
        if (kern->staged_in == vw->v || kern->staged_out == vw->v) return false;
        scan(C, kern->body);
        kn_kwalk(&C->w, kern->body);
    }
    return !C->bad;
}

/* ---- the candidates ---- */

/* The buffer holding value v: the one non-constant, non-scratch buffer of its name (NULL
 * where there is none or several). */
static kn_kbuf *buf_of(const kn_kprog *p, const kn_value *v) {
    if (!v || !v->name || !v->name[0]) return NULL;
    kn_kbuf *found = NULL;
    for (int i = 0; i < p->nbufs; i++)
        if (p->bufs[i]->onnx && !strcmp(p->bufs[i]->onnx, v->name) &&
            p->bufs[i]->kind != KB_CONST && p->bufs[i]->kind != KB_SCRATCH) {
            if (found) return NULL;
            found = p->bufs[i];
        }
    return found;
}

/* The one axis along which v is cut out of p (all other dims equal), or -1. */
static int cut_axis(const kn_kbuf *v, const kn_kbuf *p) {
    if (v->rank != p->rank || v->dtype != p->dtype || v->rank < 1) return -1;
    int ax = -1;
    for (int d = 0; d < v->rank; d++)
        if (v->dims[d] != p->dims[d]) {
            if (ax >= 0) return -1;
            ax = d;
        }
    return ax;
}

static bool set_view(view *vw, kn_kbuf *v, kn_kbuf *p, int ax, int64_t a) {
    if (ax < 0 || a < 0 || a + v->dims[ax] > p->dims[ax]) return false;
    int64_t inner = 1;
    for (int d = ax + 1; d < v->rank; d++) inner *= v->dims[d];
    *vw = (view){.v = v,
                 .p = p,
                 .plane = v->dims[ax] * inner,
                 .pstride = p->dims[ax] * inner,
                 .base = a * inner};
    return vw->plane > 0;
}

static bool view_kinds(const kn_kbuf *v, const kn_kbuf *p) {
    return v->kind == KB_TEMP && !v->whole_run && !v->alias &&
           (p->kind == KB_TEMP || p->kind == KB_INPUT || p->kind == KB_OUTPUT) && !p->whole_run;
}

static int64_t const_at(const kn_value *v, int i) {
    const kn_tensor *t = v ? v->constant : NULL;
    if (!t || !t->data || i >= kn_type_numel(&t->type)) return INT64_MIN;
    if (t->type.dtype == KN_I64) return ((const int64_t *)t->data)[i];
    if (t->type.dtype == KN_I32) return ((const int32_t *)t->data)[i];
    return INT64_MIN;
}

/* Kernel k is a Slice of one axis, step 1, copying P into V and nothing else: its view. */
static bool slice_view(const kn_kprog *p, int k, view *vw) {
    const kn_kernel *kern = p->kernels[k];
    const kn_node *n = kern->node;
    if (!n || n->op != KN_OP_SLICE || n->nin < 3 || n->nout != 1) return false;
    kn_kbuf *v = buf_of(p, n->out[0]), *pb = buf_of(p, n->in[0]);
    if (!v || !pb || !view_kinds(v, pb)) return false;
    int ax = cut_axis(v, pb);
    if (ax < 0) return false;
    int nax = (int)kn_type_numel(&n->in[1]->type);
    int64_t start = INT64_MIN;
    for (int i = 0; i < nax; i++) {
        int64_t a = n->nin > 3 && n->in[3] ? const_at(n->in[3], i) : i;
        if (a < 0) a += pb->rank;
        int64_t st = n->nin > 4 && n->in[4] ? const_at(n->in[4], i) : 1;
        if (a != ax) continue;
        if (st != 1) return false;
        start = const_at(n->in[1], i);
    }
    if (start == INT64_MIN) return false;
    if (start < 0) start += pb->dims[ax];
    /* the kernel touches v (written) and pb (read) only */
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use);
    kn_kernel_uses(kern->body, use);
    bool only = use[v->id] == 2 && use[pb->id] == 1;
    for (int i = 0; i < p->nbufs && only; i++)
        if (i != v->id && i != pb->id && use[i]) only = false;
    free(use);
    return only && set_view(vw, v, pb, ax, start);
}

/* Whether statement s of a Concat kernel only copies v into c. */
static bool copies_only(const kn_kprog *p, kn_ks *s, const kn_kbuf *v, const kn_kbuf *c) {
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use);
    kn_kernel_uses(s, use);
    bool ok = use[v->id] == 1 && use[c->id] == 2;
    for (int i = 0; i < p->nbufs && ok; i++)
        if (i != v->id && i != c->id && use[i]) ok = false;
    free(use);
    return ok;
}

/* Writes the view into V's buffer record (the plan dump prints it). */
static void record(const view *vw) {
    vw->v->view = vw->p;
    vw->v->view_plane = vw->plane;
    vw->v->view_stride = vw->pstride;
    vw->v->view_base = vw->base;
}

kn_status kn_plan_views(kn_ctx *cx, kn_kprog *p) {
    if (!p->target || p->target->kind != KN_TARGET_MCU) return KN_OK;
    vctx C = {.w = {.enter = v_enter, .expr = v_expr}, .p = p};
    C.ext = malloc(((size_t)p->nvars + 1) * sizeof *C.ext);
    C.decl = malloc(((size_t)p->nvars + 1) * sizeof *C.decl);
    C.nset = malloc(((size_t)p->nvars + 1) * sizeof *C.nset);
    KN_ASSERT(C.ext && C.decl && C.nset);
    C.L = kl_builder(cx, p);
    undo U = {0};
    C.U = &U;
    size_t arena = SIZE_MAX; /* the plan's arena so far (computed at the first candidate): a
                                view is kept where it does not raise it */
    for (int k = 0; k < p->nkernels; k++) {
        kn_kernel *kern = p->kernels[k];
        const kn_node *n = kern->node;
        if (!n) continue;
        if (n->op == KN_OP_SLICE) {
            view vw;
            if (!slice_view(p, k, &vw) || !view_accesses(&C, &vw, k, false)) continue;
            if (arena == SIZE_MAX) arena = kn_plan_arena_dry(p);
            undo_reset(&U, kern->body);
            view_accesses(&C, &vw, k, true);
            kern->body->n = 0;
            size_t a = kn_plan_arena_dry(p);
            if (a > arena) {
                undo_apply(&U);
                continue;
            }
            arena = a;
            record(&vw);
            continue;
        }
        if (n->op != KN_OP_CONCAT || n->nout != 1) continue;
        kn_kbuf *c = buf_of(p, n->out[0]);
        if (!c) continue;
        int64_t ax = kn_attr_int(cx, n, "axis", 0);
        if (ax < 0) ax += c->rank;
        int64_t at = 0;
        for (int j = 0; j < n->nin; j++) {
            kn_kbuf *v = buf_of(p, n->in[j]);
            int64_t a = at;
            if (!v || v->rank != c->rank || ax >= c->rank) break;
            at += v->dims[ax];
            bool twice = false;
            for (int i = 0; i < n->nin; i++)
                if (i != j && n->in[i] == n->in[j]) twice = true;
            view vw;
            if (twice || !view_kinds(v, c) || cut_axis(v, c) != ax ||
                !set_view(&vw, v, c, (int)ax, a))
                continue;
            /* the Concat's statements copying v, and no other statement of it touching v */
            kn_ks *body = kern->body;
            int copies = 0, other = 0;
            for (int i = 0; i < body->n; i++) {
                unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
                KN_ASSERT(use);
                kn_kernel_uses(body->body[i], use);
                bool t = use[v->id] != 0;
                free(use);
                if (!t) continue;
                if (copies_only(p, body->body[i], v, c))
                    copies++;
                else
                    other++;
            }
            if (!copies || other || !view_accesses(&C, &vw, k, false)) continue;
            if (arena == SIZE_MAX) arena = kn_plan_arena_dry(p);
            undo_reset(&U, body);
            int kept = 0;
            for (int i = 0; i < body->n; i++)
                if (!copies_only(p, body->body[i], v, c)) body->body[kept++] = body->body[i];
            body->n = kept;
            view_accesses(&C, &vw, k, true);
            size_t a2 = kn_plan_arena_dry(p);
            if (a2 > arena) {
                undo_apply(&U);
                continue;
            }
            arena = a2;
            record(&vw);
        }
    }
    free(U.xs);
    free(U.ss);
    free(U.stmts);
    kl_builder_destroy(C.L);
    free(C.ext);
    free(C.decl);
    free(C.nset);
    return cx->status;
}
