/* Static memory planning of a kernel IR program.
 * requires: lowered program; breaks: nothing.
 *
 * 0. Lifetimes: each buffer's first and last kernel, from the statements that touch
 *    it (kn_kprog_lifetimes), so passes that rewrite kernels need not keep them.
 * 1. In place: a temporary a kernel defines takes the storage of a temporary of the
 *    same byte and element size that dies in that kernel, when the kernel's code
 *    reads each element before writing it and in that iteration only (can_share).
 * 2. Offsets: temporaries and kernel scratch buffers are placed greedily, largest
 *    first, at the lowest 64-byte aligned offset that overlaps no buffer whose
 *    lifetime [first, last] (in kernels) intersects its own (as TFLite's greedy
 *    by-size planner does). The arena size is the highest end; the lower bound is
 *    the largest total of bytes live in any one kernel, each buffer counted with its
 *    size rounded up to the 64-byte alignment every placement must respect.
 * With the program's io_in_arena (--arena-in-place-io), inputs and outputs are placed
 * the same way: an input live from before the first kernel (the caller wrote it) to its
 * last reader, an output from its first writer to after the last kernel (the caller
 * reads it), so the arena is all the RAM the run needs. */
#include "ir/kir.h"
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>

static size_t buf_bytes(const kn_kbuf *b) {
    return (size_t)b->numel * kn_dtype_get(b->dtype)->size;
}

/* Every buffer starts on a KN_ARENA_ALIGN boundary, so it occupies its size rounded up. */
static size_t aligned(size_t n) {
    return (n + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
}

static bool planned(const kn_kprog *p, const kn_kbuf *b) {
    if (p->io_in_arena && (b->kind == KB_INPUT || b->kind == KB_OUTPUT)) return true;
    return (b->kind == KB_TEMP || b->kind == KB_SCRATCH) && !b->alias;
}

/* ---- in place, from the kernel IR ----
 *
 * Kernel k may write `out` over `in` when every access to either is one element
 * position per iteration, read before it is written: `out` is written by exactly one
 * store, never read, never copied; `in` is never written; every load of `in` is in
 * that store's value or in a local declared before it in the same block, at the same
 * index and width; and that index is injective over the loops around the store (no
 * two iterations write the same element, so none reads an element another already
 * overwrote). Elementwise kernels are of this form whichever lowering or fusion made
 * them; anything else keeps its own storage, which is always correct. */

typedef struct ip_ctx {
    kn_kwalker w;
    const kn_kbuf *in, *out;
    const kn_ks *store; /* the one store to out */
    const kn_ks *block; /* the block holding it */
    int nstores;
    bool bad;
    const kn_ks *stack[64]; /* enclosing statements */
    int depth;
} ip_ctx;

static void ip_expr(kn_kwalker *w, kn_kx *x) {
    ip_ctx *C = (ip_ctx *)w;
    if ((x->op == KX_LOAD || x->op == KX_STR || x->op == KX_REGEX) && x->buf == C->out)
        C->bad = true;
}

static bool ip_enter(kn_kwalker *w, kn_ks *s) {
    ip_ctx *C = (ip_ctx *)w;
    if (s->kind == KS_COPY &&
        (s->buf == C->in || s->buf == C->out || s->src == C->in || s->src == C->out))
        C->bad = true;
    if (s->kind == KS_STORE && s->buf == C->in) C->bad = true;
    if (s->kind == KS_STORE && s->buf == C->out) {
        C->nstores++;
        C->store = s;
        C->block = C->depth ? C->stack[C->depth - 1] : NULL;
    }
    if (C->depth == 64) {
        C->bad = true;
        return false;
    }
    C->stack[C->depth++] = s;
    return true;
}

static void ip_leave(kn_kwalker *w, kn_ks *s) {
    (void)s;
    ((ip_ctx *)w)->depth--;
}

/* Adds scale * x to coef (per variable) and *k; false if x is not affine in the
 * loop variables of ext (>= 0 entries). */
static bool affine(const kn_kx *x, int64_t scale, const int64_t *ext, int64_t *coef, int64_t *k) {
    switch (x->op) {
    case KX_CONST: *k += scale * x->i; return true;
    case KX_VAR:
        if (ext[x->var] < 0) return false;
        coef[x->var] += scale;
        return true;
    case KX_ADD:
        return affine(x->a[0], scale, ext, coef, k) && affine(x->a[1], scale, ext, coef, k);
    case KX_SUB:
        return affine(x->a[0], scale, ext, coef, k) && affine(x->a[1], -scale, ext, coef, k);
    case KX_MUL:
        if (x->a[1]->op == KX_CONST) return affine(x->a[0], scale * x->a[1]->i, ext, coef, k);
        if (x->a[0]->op == KX_CONST) return affine(x->a[1], scale * x->a[0]->i, ext, coef, k);
        return false;
    case KX_CAST: return kn_dtype_get(x->dtype)->is_int && affine(x->a[0], scale, ext, coef, k);
    default: return false;
    }
}

static int cmp_abs(const void *a, const void *b) {
    int64_t x = llabs(*(const int64_t *)a), y = llabs(*(const int64_t *)b);
    return x < y ? -1 : x > y;
}

/* Whether index (lanes wide) names a different element range in every iteration of
 * the loops whose extents are ext. */
static bool injective(const kn_kx *index, int lanes, const int64_t *ext, int nvars) {
    int64_t *coef = calloc((size_t)nvars + 1, sizeof *coef), k = 0;
    int64_t *terms = calloc(2 * (size_t)nvars + 2, sizeof *terms);
    KN_ASSERT(coef && terms);
    bool ok = affine(index, 1, ext, coef, &k);
    int n = 0;
    for (int v = 0; ok && v < nvars; v++) {
        if (ext[v] <= 1) continue;    /* not a loop here, or one iteration */
        if (coef[v] == 0) ok = false; /* the same element in several iterations */
        terms[2 * n] = coef[v];
        terms[2 * n + 1] = ext[v];
        n++;
    }
    qsort(terms, (size_t)n, 2 * sizeof *terms, cmp_abs);
    int64_t span = lanes; /* elements one iteration of the loops so far covers */
    for (int i = 0; ok && i < n; i++) {
        int64_t c = llabs(terms[2 * i]);
        if (c < span) ok = false;
        span += c * (terms[2 * i + 1] - 1);
    }
    free(coef);
    free(terms);
    return ok;
}

/* Loads of buf in x, each checked against the store's index and width. */
static bool loads_match(const kn_kx *x, const kn_kbuf *buf, const kn_ks *store) {
    if (!x) return true;
    if (x->op == KX_LOAD && x->buf == buf &&
        (!kn_kx_equal(x->a[0], store->index) || kx_lanes(x) != kx_lanes(store->value)))
        return false;
    if ((x->op == KX_STR || x->op == KX_REGEX) && x->buf == buf) return false;
    for (int i = 0; i < 3; i++)
        if (!loads_match(x->a[i], buf, store)) return false;
    return true;
}

static bool reads(const kn_kx *x, const kn_kbuf *buf) {
    if (!x) return false;
    if ((x->op == KX_LOAD || x->op == KX_STR || x->op == KX_REGEX) && x->buf == buf) return true;
    return reads(x->a[0], buf) || reads(x->a[1], buf) || reads(x->a[2], buf);
}

typedef struct rd_ctx {
    kn_kwalker w;
    const kn_kbuf *buf;
    int n;
} rd_ctx;

static void rd_expr(kn_kwalker *w, kn_kx *x) {
    rd_ctx *R = (rd_ctx *)w;
    R->n += (x->op == KX_LOAD || x->op == KX_STR || x->op == KX_REGEX) && x->buf == R->buf;
}

/* Loads of buf anywhere in s. */
static int count_reads(kn_ks *s, const kn_kbuf *buf) {
    rd_ctx R = {.w = {.expr = rd_expr}, .buf = buf};
    kn_kwalk(&R.w, s);
    return R.n;
}

static int count_x(const kn_kx *x, const kn_kbuf *buf) {
    if (!x) return 0;
    return ((x->op == KX_LOAD || x->op == KX_STR || x->op == KX_REGEX) && x->buf == buf) +
           count_x(x->a[0], buf) + count_x(x->a[1], buf) + count_x(x->a[2], buf);
}

/* The extents of the loops around statement `at` (ext[var], -1 for other variables;
 * a loop with a computed trip count makes the result false). */
typedef struct ext_ctx {
    kn_kwalker w;
    const kn_ks *at;
    int64_t *ext, *found;
    int nvars;
    bool done, dynamic;
} ext_ctx;

static bool ext_enter(kn_kwalker *w, kn_ks *s) {
    ext_ctx *E = (ext_ctx *)w;
    if (E->done) return false;
    if (s == E->at) {
        memcpy(E->found, E->ext, (size_t)E->nvars * sizeof *E->ext);
        E->done = true;
        return false;
    }
    if (s->kind == KS_FOR) E->ext[s->var] = s->ext ? -2 : s->extent;
    return true;
}

static void ext_leave(kn_kwalker *w, kn_ks *s) {
    if (s->kind == KS_FOR) ((ext_ctx *)w)->ext[s->var] = -1;
}

static bool injective_at(const kn_kprog *p, kn_ks *body, const kn_ks *st, int lanes) {
    int n = p->nvars;
    ext_ctx E = {.w = {.enter = ext_enter, .leave = ext_leave}, .at = st, .nvars = n};
    E.ext = malloc(((size_t)n + 1) * sizeof *E.ext);
    E.found = malloc(((size_t)n + 1) * sizeof *E.found);
    KN_ASSERT(E.ext && E.found);
    for (int v = 0; v < n; v++) E.ext[v] = -1;
    kn_kwalk(&E.w, body);
    bool ok = E.done;
    for (int v = 0; ok && v < n; v++) ok = E.found[v] != -2;
    ok = ok && injective(st->index, lanes, E.found, n);
    free(E.ext);
    free(E.found);
    return ok;
}

static bool can_share(const kn_kprog *p, kn_ks *body, const kn_kbuf *in, const kn_kbuf *out) {
    ip_ctx C = {.w = {.enter = ip_enter, .leave = ip_leave, .expr = ip_expr}, .in = in, .out = out};
    kn_kwalk(&C.w, body);
    bool ok = !C.bad && C.nstores == 1 && C.block && C.block->kind == KS_BLOCK;
    /* the loops around the store: walk again down to it to know their extents */
    if (ok) {
        const kn_ks *st = C.store, *blk = C.block;
        int reads_here = 0, at = -1;
        for (int i = 0; i < blk->n; i++) {
            const kn_ks *s = blk->body[i];
            if (s == st) {
                at = i;
                break;
            }
            if (s->kind == KS_DECL && reads(s->value, in)) {
                if (!loads_match(s->value, in, st)) ok = false;
                reads_here += count_x(s->value, in);
            }
        }
        if (at < 0 || !loads_match(st->value, in, st)) ok = false;
        reads_here += count_x(st->value, in);
        /* no load of in anywhere else */
        if (ok && count_reads(body, in) != reads_here) ok = false;
        if (ok) ok = injective_at(p, body, st, kx_lanes(st->value));
    }
    return ok;
}

static void in_place(kn_kprog *p) {
    for (int i = 0; i < p->nbufs; i++) p->bufs[i]->alias = NULL;
    unsigned char *use = malloc((size_t)p->nbufs + 1);
    KN_ASSERT(use);
    for (int k = 0; k < p->nkernels; k++) {
        memset(use, 0, (size_t)p->nbufs + 1);
        kn_kernel_uses(p->kernels[k]->body, use);
        for (int o = 0; o < p->nbufs; o++) {
            kn_kbuf *out = p->bufs[o];
            if (!(use[o] & 2) || out->kind != KB_TEMP || out->first != k || out->whole_run ||
                out->alias)
                continue;
            for (int i = 0; i < p->nbufs; i++) {
                kn_kbuf *in = p->bufs[i];
                if (i == o || use[i] != 1 || in->kind != KB_TEMP || in->whole_run) continue;
                kn_kbuf *r = kn_kbuf_storage(in);
                if (in->last != k || r->last > k || buf_bytes(in) != buf_bytes(out) ||
                    kn_dtype_get(in->dtype)->size != kn_dtype_get(out->dtype)->size ||
                    !can_share(p, p->kernels[k]->body, in, out))
                    continue;
                out->alias = r;
                if (out->last > r->last) r->last = out->last;
                break;
            }
        }
    }
    free(use);
}

static int by_size(const void *a, const void *b) {
    size_t x = buf_bytes(*(kn_kbuf *const *)a), y = buf_bytes(*(kn_kbuf *const *)b);
    if (x != y) return x < y ? 1 : -1;
    return (*(kn_kbuf *const *)a)->id - (*(kn_kbuf *const *)b)->id; /* deterministic */
}

kn_status kn_kpass_plan(kn_ctx *cx, kn_kprog *p) {
    (void)cx;
    kn_kprog_lifetimes(p);
    in_place(p);
    if (p->io_in_arena) /* the caller writes inputs before the run, reads outputs after it */
        for (int i = 0; i < p->nbufs; i++) {
            kn_kbuf *b = p->bufs[i]; /* one no kernel touches keeps no range (offset 0) */
            if (b->kind == KB_INPUT && b->first >= 0) b->first = 0;
            if (b->kind == KB_OUTPUT && b->first >= 0) b->last = p->nkernels - 1;
            if ((b->kind == KB_INPUT || b->kind == KB_OUTPUT) && b->first < 0) b->offset = 0;
        }
    kn_kbuf **v = calloc((size_t)p->nbufs + 1, sizeof *v);
    KN_ASSERT(v);
    int n = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (planned(p, p->bufs[i]) && p->bufs[i]->first >= 0) v[n++] = p->bufs[i];
    qsort(v, (size_t)n, sizeof *v, by_size);
    size_t end = 0;
    for (int i = 0; i < n; i++) {
        kn_kbuf *b = v[i];
        size_t size = buf_bytes(b), off = 0;
        /* lowest offset clear of every placed, lifetime-overlapping buffer: try 0 and the
         * end of each conflicting one, in increasing order */
        for (bool moved = true; moved;) {
            moved = false;
            for (int j = 0; j < i; j++) {
                kn_kbuf *o = v[j];
                if (o->last < b->first || b->last < o->first) continue;
                size_t os = buf_bytes(o);
                if (off < o->offset + os && o->offset < off + size) {
                    off = (o->offset + os + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
                    moved = true;
                }
            }
        }
        b->offset = off;
        if (off + size > end) end = off + size;
    }
    size_t bound = 0;
    for (int k = 0; k < p->nkernels; k++) {
        size_t live = 0;
        for (int i = 0; i < n; i++)
            if (v[i]->first <= k && k <= v[i]->last) live += aligned(buf_bytes(v[i]));
        if (live > bound) bound = live;
    }
    free(v);
    p->arena_size = (end + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
    p->arena_lower_bound = bound;
    return KN_OK;
}
