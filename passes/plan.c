/* Static memory planning of a kernel IR program.
 * requires: lowered program; breaks: nothing.
 *
 * 0a. Band views (microcontrollers, passes/views.c): a Slice's output or a Concat's part
 *    cut along one axis becomes a strided view of its parent where the arena (steps 0-2,
 *    run dry: kn_plan_arena_dry) does not grow; its kernels then address the parent and
 *    the copy goes.
 * 0. Lifetimes: each buffer's first and last kernel, from the statements that touch
 *    it (kn_kprog_lifetimes), so passes that rewrite kernels need not keep them.
 * 1. In place: a temporary a kernel defines takes the storage of a temporary of the
 *    same byte and element size that dies in that kernel (and that no other buffer the
 *    kernel reads shares), when the kernel's code reads each element before writing it
 *    and in that iteration only (can_share: one store, or several that the kernel's
 *    builder states write disjoint elements, kn_kernel.disjoint, each reading the input
 *    only at its own index: a convolution's residual), or when the kernel's builder
 *    states that it stages the input before writing over it (kn_kernel.staged_in: a
 *    depthwise channel's plane, bands of rows of a 1x1 convolution; staged_share checks
 *    that the input is read by copies alone).
 *    A kernel that only copies one temporary whole into another (Reshape) gives the
 *    copy the original's storage and loses its copy (copy_alias). Before that, on
 *    targets that are not microcontrollers, a kernel of whole-tensor copies into parts of
 *    one temporary (a Concat with nothing outside the concatenated axis, SqueezeNet's
 *    fire modules) places each copied temporary inside its part of the output and loses
 *    that copy (concat_views): the producers store into the concatenated tensor.
 * 2. Offsets: temporaries and kernel scratch buffers are placed greedily, largest
 *    first, at the lowest 64-byte aligned offset that overlaps no buffer whose
 *    lifetime [first, last] (in kernels) intersects its own (as TFLite's greedy
 *    by-size planner does), and again in three other orders (longest lifetime, earliest,
 *    bytes x lifetime first), keeping the order whose arena is smallest (place_best;
 *    greedy placement depends on the order and none wins on every program). The
 *    arena size is the highest end; the lower bound is
 *    the largest total of bytes live in any one kernel, each buffer counted with its
 *    size rounded up to the 64-byte alignment every placement must respect.
 * With the program's io_in_arena (--arena-in-place-io), inputs and outputs are placed
 * the same way: an input live from before the first kernel (the caller wrote it) to its
 * last reader, an output from its first writer to after the last kernel (the caller
 * reads it), so the arena is all the RAM the run needs.
 * 3. Regions (the program's nregions, --memory fast=64K,slow=8M): the arena is split into
 *    up to KN_MAX_REGIONS arenas, fastest first, each with a capacity. Buffers go, most
 *    estimated traffic per byte first (the bytes their loads, stores and copies move in
 *    a run, loop trip counts included, over their size), into the fastest region whose
 *    plan (step 2 over its buffers) still fits with them; the rest fall through to the
 *    slower regions. An in-place alias lives in the region of its storage and adds its
 *    traffic to it. Each region gets its size, its own lower bound and its share of
 *    the arena's traffic.
 * 4. Threads (pass threadplan, kn_kpass_threadplan; after parallel, whose splits it reads):
 *    at more than one thread on a CPU (never a microcontroller), one region, and while one
 *    abstract run of the program (kn_xrun, passes/xcore.c) stays within a budget of
 *    statements, the offsets of step 2 are chosen again so that each line a thread writes
 *    was held last by that thread: per storage and line, the threads first writing it and
 *    the threads holding it when the storage dies; a buffer costs the lines on which the
 *    previous occupant's holders include a thread that is not among its writers. Two
 *    starts (greedy in step 2's order, and step 2's offsets) are each improved by moving
 *    single buffers to cheaper offsets; the lower total wins. Every offset keeps the arena
 *    within step 2's + 10%. Lifetimes and in-place choices do not change. KILN_THREAD_PLAN=0
 *    turns it off (docs/internals.md, "The thread-aware arena plan"). */
#include "ir/diag.h"
#include "ir/kir.h"
#include "passes/pass.h"
#include "passes/xcore.h"
#include "targets/target.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The arena bytes b takes: every copy of a per-thread scratch (kn_kbuf_plan_bytes). */
static size_t buf_bytes(const kn_kbuf *b) {
    return kn_kbuf_plan_bytes(b);
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

enum { IP_MAX_STORES = 64 }; /* stores to out a kernel stating `disjoint` may have */

typedef struct ip_ctx {
    kn_kwalker w;
    const kn_kbuf *in, *out;
    const kn_ks *store; /* the one store to out (the last one) */
    const kn_ks *block; /* the block holding it */
    const kn_ks *stores[IP_MAX_STORES], *blocks[IP_MAX_STORES]; /* every store and block */
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
        if (s->word || s->stride > 1) C->bad = true; /* in place only element for element */
        C->store = s;
        C->block = C->depth ? C->stack[C->depth - 1] : NULL;
        if (C->nstores < IP_MAX_STORES) {
            C->stores[C->nstores] = C->store;
            C->blocks[C->nstores] = C->block;
        }
        C->nstores++;
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
    int64_t t;
    switch (x->op) {
    case KX_CONST: /* a term past int64 is no index this proves anything about */
        return !__builtin_mul_overflow(scale, x->i, &t) && !__builtin_add_overflow(*k, t, k);
    case KX_VAR:
        if (ext[x->var] < 0) return false;
        return !__builtin_add_overflow(coef[x->var], scale, &coef[x->var]);
    case KX_ADD:
        return affine(x->a[0], scale, ext, coef, k) && affine(x->a[1], scale, ext, coef, k);
    case KX_SUB:
        return scale != INT64_MIN && affine(x->a[0], scale, ext, coef, k) &&
               affine(x->a[1], -scale, ext, coef, k);
    case KX_MUL:
        if (x->a[1]->op == KX_CONST)
            return !__builtin_mul_overflow(scale, x->a[1]->i, &t) &&
                   affine(x->a[0], t, ext, coef, k);
        if (x->a[0]->op == KX_CONST)
            return !__builtin_mul_overflow(scale, x->a[0]->i, &t) &&
                   affine(x->a[1], t, ext, coef, k);
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
        if (ext[v] <= 1) continue;            /* not a loop here, or one iteration */
        if (coef[v] == 0) ok = false;         /* the same element in several iterations */
        if (coef[v] == INT64_MIN) ok = false; /* no llabs: no index of a real buffer */
        terms[2 * n] = coef[v];
        terms[2 * n + 1] = ext[v];
        n++;
    }
    if (ok) qsort(terms, (size_t)n, 2 * sizeof *terms, cmp_abs);
    int64_t span = lanes; /* elements one iteration of the loops so far covers */
    for (int i = 0; ok && i < n; i++) {
        int64_t c = llabs(terms[2 * i]), t;
        if (c < span) ok = false;
        if (__builtin_mul_overflow(c, terms[2 * i + 1] - 1, &t) ||
            __builtin_add_overflow(span, t, &span))
            ok = false; /* past int64: not shown distinct */
    }
    free(coef);
    free(terms);
    return ok;
}

/* Loads of buf in x, each checked against the store's index and width. */
static bool loads_match(const kn_kx *x, const kn_kbuf *buf, const kn_ks *store) {
    if (!x) return true;
    if (x->op == KX_LOAD && x->buf == buf &&
        (x->i == 4 || x->stride > 1 || !kn_kx_equal(x->a[0], store->index) ||
         kx_lanes(x) != kx_lanes(store->value)))
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

/* Loads of in at store st (in its value and in the locals declared before it in its
 * block blk), each at st's index and width: their number, or -1 if one is not. */
static int store_reads(const kn_ks *st, const kn_ks *blk, const kn_kbuf *in) {
    if (!blk || blk->kind != KS_BLOCK) return -1;
    int n = 0, at = -1;
    for (int i = 0; i < blk->n; i++) {
        const kn_ks *s = blk->body[i];
        if (s == st) {
            at = i;
            break;
        }
        if (s->kind == KS_DECL && reads(s->value, in)) {
            if (!loads_match(s->value, in, st)) return -1;
            n += count_x(s->value, in);
        }
    }
    if (at < 0 || !loads_match(st->value, in, st)) return -1;
    return n + count_x(st->value, in);
}

/* One store to out, injective over its loops, or several in a kernel whose builder
 * states that its stores write disjoint elements (kn_kernel.disjoint: a convolution
 * tile's border, interior and partial tiles, each storing through its own statement,
 * at indices through locals the injectivity test cannot follow); each store reads in
 * only at its own index. */
static bool can_share(const kn_kprog *p, const kn_kernel *kern, const kn_kbuf *in,
                      const kn_kbuf *out) {
    kn_ks *body = kern->body;
    ip_ctx C = {.w = {.enter = ip_enter, .leave = ip_leave, .expr = ip_expr}, .in = in, .out = out};
    kn_kwalk(&C.w, body);
    bool ok = !C.bad &&
              (C.nstores == 1 || (kern->disjoint && C.nstores > 1 && C.nstores <= IP_MAX_STORES));
    int reads_here = 0;
    for (int i = 0; ok && i < C.nstores; i++) {
        int n = store_reads(C.stores[i], C.blocks[i], in);
        if (n < 0) ok = false;
        reads_here += n;
    }
    /* no load of in anywhere else */
    if (ok && count_reads(body, in) != reads_here) ok = false;
    /* the loops around each store: walk again down to it to know their extents (a
     * kernel stating `disjoint` has said so for every store and iteration) */
    for (int i = 0; ok && !kern->disjoint && i < C.nstores; i++)
        ok = injective_at(p, body, C.stores[i], kx_lanes(C.stores[i]->value));
    return ok;
}

typedef struct cp_ctx {
    kn_kwalker w;
    const kn_kbuf *in, *out;
    int copies;
    bool bad;
} cp_ctx;

static void cp_expr(kn_kwalker *w, kn_kx *x) {
    cp_ctx *C = (cp_ctx *)w;
    if ((x->op == KX_LOAD || x->op == KX_STR || x->op == KX_REGEX) &&
        (x->buf == C->in || x->buf == C->out))
        C->bad = true;
}

static bool cp_enter(kn_kwalker *w, kn_ks *s) {
    cp_ctx *C = (cp_ctx *)w;
    if (s->kind == KS_STORE && s->buf && s->buf->kind == KB_SCRATCH && s->value &&
        s->value->op == KX_LOAD && s->value->buf == C->in && !reads(s->index, C->in) &&
        !reads(s->value->a[0], C->in)) {
        C->copies++; /* a gather into scratch, one element at a time */
        return false;
    }
    if (s->kind == KS_COPY) {
        if (s->buf == C->in || s->src == C->out) C->bad = true;
        if (s->src == C->in) C->copies++;
        if (s->buf == C->out) C->bad = true;
    }
    if (s->kind == KS_STORE && s->buf == C->in) C->bad = true;
    return true;
}

/* Kernel kern states that it stages in before writing out over it (kn_kernel.staged_in):
 * checked here only as far as the statements show it: in is read by copies alone into
 * other buffers (KS_COPY, or a store of a plain load of in into a scratch buffer),
 * never loaded otherwise or written, and out is never read or copied. */
static bool staged_share(const kn_kernel *kern, const kn_kbuf *in, const kn_kbuf *out) {
    if (kern->staged_in != in || kern->staged_out != out) return false;
    cp_ctx C = {.w = {.enter = cp_enter, .expr = cp_expr}, .in = in, .out = out};
    kn_kwalk(&C.w, kern->body);
    return !C.bad && C.copies > 0;
}

/* Kernel k is one copy of the whole of a temporary into another of the same size and
 * dtype (a Reshape, Flatten, Squeeze or Unsqueeze: the same elements in the same order):
 * its output takes the input's storage and the copy is removed. Each is written once, so
 * they may share it while it lives to the later of their last uses (extended here; a
 * kernel that would write in place into it checks that end). */
static bool copy_alias(kn_kprog *p, int k, bool dry) {
    kn_ks *body = p->kernels[k]->body;
    if (body->n != 1 || body->body[0]->kind != KS_COPY) return false;
    const kn_ks *c = body->body[0];
    kn_kbuf *out = c->buf, *in = c->src;
    if (!c->count || c->count->op != KX_CONST || c->index->op != KX_CONST || c->index->i ||
        c->src_index->op != KX_CONST || c->src_index->i)
        return false;
    if (out == in || out->kind != KB_TEMP || in->kind != KB_TEMP || out->whole_run ||
        in->whole_run || out->alias || out->first != k || out->dtype != in->dtype ||
        c->count->i != out->numel || out->numel != in->numel)
        return false;
    kn_kbuf *r = kn_kbuf_storage(in);
    out->alias = r;
    out->alias_at = kn_kbuf_view_at(in); /* in may be a Concat input placed in its output */
    if (out->last > r->last) r->last = out->last;
    if (!dry) body->n = 0;
    return true;
}

/* Kernel k only copies temporaries whole into parts of temporaries (a Concat whose
 * inputs are contiguous parts of its output): each copied temporary X that can be is
 * placed at its part of the destination C (X->alias = C, alias_at = its byte offset)
 * and its copy removed, so the kernel that computes X stores straight into C. C's
 * storage then lives from the first such producer to the last use of either.
 *
 * Why: the copy costs a pass over the tensor, and at two threads it runs on the
 * calling thread alone, which first pulls the half the worker computed across to its
 * core and leaves the consumer's half on the wrong core (docs/benchmarks.md, "Concat
 * in place"). X qualifies when it is an arena temporary written before k and not yet
 * placed anywhere (so not twice), C is one not placed in anything, they hold the same
 * element type, the copy is X's elements 0..numel-1 at a constant destination offset
 * of a multiple of KN_ARENA_ALIGN bytes (every buffer keeps its alignment), X is smaller
 * than C (a copy of the whole is copy_alias's, below), and neither is whole_run. Not on
 * microcontrollers: C would be live, at its full size, from the first producer on, which can raise
 * the peak RAM that the patch pass lowers by computing a convolution's output in bands joined by a
 * Concat. */
static void concat_views(kn_kprog *p, int k) {
    kn_ks *body = p->kernels[k]->body;
    if (p->target && p->target->kind == KN_TARGET_MCU) return;
    for (int i = 0; i < body->n; i++)
        if (body->body[i]->kind != KS_COPY) return;
    int kept = 0;
    for (int i = 0; i < body->n; i++) {
        kn_ks *c = body->body[i];
        kn_kbuf *out = c->buf, *in = c->src;
        size_t esz = kn_dtype_get(out->dtype)->size;
        bool ok = c->count && c->count->op == KX_CONST && c->index->op == KX_CONST &&
                  c->src_index->op == KX_CONST && c->src_index->i == 0 && in != out &&
                  out->kind == KB_TEMP && in->kind == KB_TEMP && !out->whole_run &&
                  !in->whole_run && !out->alias && !in->alias && in->dtype == out->dtype &&
                  in->first >= 0 && in->first < k && c->count->i == in->numel && c->index->i >= 0 &&
                  c->index->i + in->numel <= out->numel &&
                  in->numel < out->numel && /* a whole copy is copy_alias's (Reshape) */
                  ((size_t)c->index->i * esz) % KN_ARENA_ALIGN == 0;
        if (!ok) {
            body->body[kept++] = c;
            continue;
        }
        in->alias = out;
        in->alias_at = (size_t)c->index->i * esz;
        if (out->first < 0 || in->first < out->first) out->first = in->first;
        if (in->last > out->last) out->last = in->last;
    }
    body->n = kept;
}

/* Whether another buffer kernel k reads (use) lives in r, in's storage: out written
 * over r would change what that buffer's loads see. */
static bool shares_storage(const kn_kprog *p, const unsigned char *use, const kn_kbuf *in,
                           const kn_kbuf *r) {
    for (int i = 0; i < p->nbufs; i++)
        if ((use[i] & 1) && p->bufs[i] != in && kn_kbuf_storage(p->bufs[i]) == r) return true;
    return false;
}

static void in_place(kn_kprog *p, bool dry) {
    for (int i = 0; i < p->nbufs; i++) {
        p->bufs[i]->alias = NULL;
        p->bufs[i]->alias_at = 0;
    }
    for (int k = 0; k < p->nkernels; k++) concat_views(p, k);
    unsigned char *use = malloc((size_t)p->nbufs + 1);
    KN_ASSERT(use);
    for (int k = 0; k < p->nkernels; k++) {
        if (copy_alias(p, k, dry)) continue;
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
                    shares_storage(p, use, in, r) ||
                    !(staged_share(p->kernels[k], in, out) || can_share(p, p->kernels[k], in, out)))
                    continue;
                out->alias = r;
                out->alias_at = kn_kbuf_view_at(in);
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

/* ---- estimated traffic: bytes each buffer's loads, stores and copies move per run ----
 * Each access counts its bytes times the trip counts of the loops around it (a loop
 * with a computed trip count counts once; both branches of an if count); the statements
 * a run takes are counted the same way. */

typedef struct acc_ctx {
    kn_kwalker w;
    double mult[66];
    int depth;
    double *bytes; /* per buffer id, or NULL: statements only */
    double stmts;  /* statements the run takes */
} acc_ctx;

static double elem_bytes(const kn_kbuf *b) {
    return (double)kn_dtype_get(b->dtype)->size;
}

static bool acc_enter(kn_kwalker *w, kn_ks *s) {
    acc_ctx *A = (acc_ctx *)w;
    double m = A->mult[A->depth];
    A->stmts += m;
    if (A->bytes && s->kind == KS_STORE && s->buf)
        A->bytes[s->buf->id] += m * kn_ks_store_elems(s) * elem_bytes(s->buf);
    if (A->bytes && s->kind == KS_COPY) {
        double c = s->count && s->count->op == KX_CONST ? (double)s->count->i : 1;
        if (s->buf) A->bytes[s->buf->id] += m * c * elem_bytes(s->buf);
        if (s->src) A->bytes[s->src->id] += m * c * elem_bytes(s->src);
    }
    if (A->depth == 64) return false;
    A->mult[++A->depth] =
        m * (s->kind == KS_FOR && !s->ext && s->extent > 0 ? (double)s->extent : 1);
    return true;
}

static void acc_leave(kn_kwalker *w, kn_ks *s) {
    (void)s;
    ((acc_ctx *)w)->depth--;
}

static void acc_expr(kn_kwalker *w, kn_kx *x) {
    acc_ctx *A = (acc_ctx *)w;
    if (A->bytes && (x->op == KX_LOAD || x->op == KX_STR) && x->buf)
        A->bytes[x->buf->id] += A->mult[A->depth] * kx_load_elems(x) * elem_bytes(x->buf);
}

/* bytes[id] += the estimated traffic of each buffer over the program (bytes NULL: none);
 * returns the statements one run takes. */
static double traffic(const kn_kprog *p, double *bytes) {
    double stmts = 0;
    for (int k = 0; k < p->nkernels; k++) {
        acc_ctx A = {.w = {.enter = acc_enter, .leave = acc_leave, .expr = acc_expr},
                     .bytes = bytes};
        A.mult[0] = 1;
        kn_kwalk(&A.w, p->kernels[k]->body);
        stmts += A.stmts;
    }
    return stmts;
}

static bool lives_overlap(const kn_kbuf *a, const kn_kbuf *b) {
    return !(a->last < b->first || b->last < a->first);
}

/* Whether v[j] counts as placed when v[i] is placed: the ones before it in a greedy
 * pass (all false), every other one in a sweep of the thread-aware plan. */
static bool other(int i, int j, bool all) {
    return all ? j != i : j < i;
}

/* The lowest offset for v[i] clear of every placed, lifetime-overlapping buffer: try 0
 * and the end of each conflicting one, in increasing order. */
static size_t lowest_free(kn_kbuf **v, int n, int i, bool all) {
    kn_kbuf *b = v[i];
    size_t size = buf_bytes(b), off = 0;
    for (bool moved = true; moved;) {
        moved = false;
        for (int j = 0; j < n; j++) {
            kn_kbuf *o = v[j];
            if (!other(i, j, all) || !lives_overlap(o, b)) continue;
            if (off < o->offset + buf_bytes(o) && o->offset < off + size) {
                off = aligned(o->offset + buf_bytes(o));
                moved = true;
            }
        }
    }
    return off;
}

/* Places v[0..n) (sorted by by_size) greedily: sets each offset, returns the end. */
static size_t place(kn_kbuf **v, int n) {
    size_t end = 0;
    for (int i = 0; i < n; i++) {
        kn_kbuf *b = v[i];
        size_t size = buf_bytes(b), off = lowest_free(v, n, i, false);
        b->offset = off;
        if (off + size > end) end = off + size;
    }
    return aligned(end);
}

/* Orders tried besides by_size: the greedy placement's result depends on the order, and
 * none is best on every program (a long-lived small buffer placed after the large
 * short-lived ones can land above them all). */
static int by_span(const void *a, const void *b) { /* longest lifetime first */
    const kn_kbuf *x = *(kn_kbuf *const *)a, *y = *(kn_kbuf *const *)b;
    int lx = x->last - x->first, ly = y->last - y->first;
    if (lx != ly) return lx < ly ? 1 : -1;
    return by_size(a, b);
}

static int by_first(const void *a, const void *b) { /* earliest first */
    const kn_kbuf *x = *(kn_kbuf *const *)a, *y = *(kn_kbuf *const *)b;
    if (x->first != y->first) return x->first < y->first ? -1 : 1;
    return by_size(a, b);
}

static int by_area(const void *a, const void *b) { /* bytes x lifetime, largest first */
    const kn_kbuf *x = *(kn_kbuf *const *)a, *y = *(kn_kbuf *const *)b;
    double ax = (double)buf_bytes(x) * (x->last - x->first + 1);
    double ay = (double)buf_bytes(y) * (y->last - y->first + 1);
    if (ax != ay) return ax < ay ? 1 : -1;
    return by_size(a, b);
}

/* Places v[0..n) (sorted by by_size) in the order among by_size, by_span, by_first and
 * by_area that gives the smallest arena (the first of equals: by_size where it ties), and
 * leaves v in that order with its offsets set; returns the arena size. */
static size_t place_best(kn_kbuf **v, int n) {
    int (*const orders[])(const void *, const void *) = {by_size, by_span, by_first, by_area};
    int norders = (int)(sizeof orders / sizeof *orders), best = 0;
    size_t best_size = 0;
    for (int o = 0; o < norders; o++) {
        qsort(v, (size_t)n, sizeof *v, orders[o]);
        size_t sz = place(v, n);
        if (o == 0 || sz < best_size) {
            best = o;
            best_size = sz;
        }
    }
    qsort(v, (size_t)n, sizeof *v, orders[best]);
    return place(v, n);
}

/* --memory: each buffer, in order of estimated traffic per byte (tb[id] / bytes, the most
 * first: what a fast region serves best, as in a knapsack by value density), into the
 * first (fastest) region whose plan still fits with it; each region is then planned on
 * its own as above, so a region's plan is the one the last buffer it took was checked
 * with. A buffer no region can take is an error. */
typedef struct dens_key {
    double dens; /* traffic per byte */
    int i;       /* index in v (largest first) */
} dens_key;

static int by_dens(const void *a, const void *b) {
    const dens_key *x = a, *y = b;
    if (x->dens != y->dens) return x->dens < y->dens ? 1 : -1;
    return y->i - x->i; /* ties: smaller first */
}

static kn_status place_regions(kn_ctx *cx, kn_kprog *p, kn_kbuf **v, int n, const double *tb) {
    kn_kbuf **cand = calloc((size_t)n + 1, sizeof *cand);
    dens_key *ord = calloc((size_t)n + 1, sizeof *ord);
    bool *done = calloc((size_t)n + 1, sizeof *done);
    KN_ASSERT(cand && ord && done);
    for (int i = 0; i < n; i++)
        ord[i] = (dens_key){tb[v[i]->id] / (double)(buf_bytes(v[i]) ? buf_bytes(v[i]) : 1), i};
    qsort(ord, (size_t)n, sizeof *ord, by_dens);
    kn_status st = KN_OK;
    for (int r = 0; r < p->nregions; r++) p->region_size[r] = 0;
    for (int oi = 0; oi < n && !st; oi++) {
        int i = ord[oi].i;
        kn_kbuf *b = v[i];
        int r = 0;
        size_t size = 0;
        done[i] = true;
        for (; r < p->nregions; r++) {
            int m = 0; /* the region's buffers so far and b, largest first */
            for (int j = 0; j < n; j++)
                if ((j != i && done[j] && v[j]->region == r) || j == i) cand[m++] = v[j];
            b->region = r;
            if ((size = place(cand, m)) <= p->region_cap[r]) break;
        }
        if (r < p->nregions) {
            p->region_size[r] = size;
            continue;
        }
        char have[512];
        size_t at = 0;
        for (int q = 0; q < p->nregions && at < sizeof have; q++)
            at += (size_t)snprintf(have + at, sizeof have - at, "%s%s %zu of %zu", q ? ", " : "",
                                   p->region_name[q], p->region_size[q], p->region_cap[q]);
        st = kn_diag(cx, NULL, KN_EINVAL,
                     "--memory: buffer '%s'%s%s%s (%zu bytes, live in kernels %d to %d) fits in "
                     "no memory region (bytes planned of the size, before it: %s)",
                     b->name, b->onnx ? " (value '" : "", b->onnx ? b->onnx : "",
                     b->onnx ? "')" : "", buf_bytes(b), b->first, b->last, have);
    }
    size_t total = 0;
    for (int r = 0; r < p->nregions && !st; r++) { /* the final plan of each region */
        int m = 0;
        for (int j = 0; j < n; j++)
            if (v[j]->region == r) cand[m++] = v[j];
        p->region_size[r] = place(cand, m);
        KN_ASSERT(p->region_size[r] <= p->region_cap[r]);
        total += p->region_size[r];
    }
    p->arena_size = total;
    free(cand);
    free(ord);
    free(done);
    return st;
}

static void io_lifetimes(kn_kprog *p) {
    if (p->io_in_arena) /* the caller writes inputs before the run, reads outputs after it */
        for (int i = 0; i < p->nbufs; i++) {
            kn_kbuf *b = p->bufs[i]; /* one no kernel touches keeps no range (offset 0) */
            if (b->kind == KB_INPUT && b->first >= 0) b->first = 0;
            if (b->kind == KB_OUTPUT && b->first >= 0) b->last = p->nkernels - 1;
            if ((b->kind == KB_INPUT || b->kind == KB_OUTPUT) && b->first < 0) b->offset = 0;
        }
}

/* The arena steps 0-2 would give p as it stands, without changing its kernels (a
 * whole-tensor copy keeps its kernel): for kn_plan_views's trials. Leaves lifetimes,
 * aliases and offsets to be set again by kn_kpass_plan. */
size_t kn_plan_arena_dry(kn_kprog *p) {
    kn_kprog_lifetimes(p);
    in_place(p, true);
    io_lifetimes(p);
    kn_kbuf **v = calloc((size_t)p->nbufs + 1, sizeof *v);
    KN_ASSERT(v);
    int n = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (planned(p, p->bufs[i]) && p->bufs[i]->first >= 0) v[n++] = p->bufs[i];
    qsort(v, (size_t)n, sizeof *v, by_size);
    size_t size = place_best(v, n);
    free(v);
    for (int i = 0; i < p->nbufs; i++) {
        p->bufs[i]->alias = NULL;
        p->bufs[i]->alias_at = 0;
    }
    return size;
}

/* ---- the thread-aware placement (p->threads > 1 on a CPU, one region) ----
 *
 * The VM's slow state makes a store into a line the other core holds cost 375-415 ns
 * (docs/benchmarks.md, "An arena plan that knows which thread wrote what"), and which
 * thread holds a line depends on where the plan put the buffers that used it before.
 * One abstract run of the program (kn_xrun, passes/xcore.c) gives, per planned storage
 * and per 64-byte line of it (relative to its start, so independent of the offsets):
 * the threads of the first kernel that writes the line (wm: who brings it in) and the
 * threads of the last kernel that touches it (lm: who holds it when the storage dies).
 * On one arena line the buffers living there follow each other in run order, cyclically
 * (the last one's lines are the first one's in the next run); a buffer b arriving after
 * o takes `mis(o, b)` = 1 line over when o's holders include a thread that is not among
 * b's writers. Placing b at an offset inserts it between its predecessor and successor
 * on each of its lines: the cost is mis(prev, b) + mis(b, next) - mis(prev, next), a
 * line with no other buffer costing mis(b, b). */

typedef struct tmap {
    unsigned char *wm, *lm; /* per line of the storage: thread bits (bit h: thread h) */
    int *wk;                /* per line: the kernel of the first write (-1: none yet) */
    int nl;
} tmap;

typedef struct tp_ctx {
    tmap *m; /* per buffer id (nl 0: not a planned storage) */
} tp_ctx;

static void tp_touch(void *user, const kn_xrun_at *at, const kn_kbuf *b, int64_t index, int64_t n,
                     bool write) {
    tp_ctx *T = user;
    const kn_kbuf *r = kn_kbuf_storage(b);
    tmap *m = &T->m[r->id];
    if (!m->nl || b->per_thread) return;
    size_t size = kn_dtype_get(b->dtype)->size;
    if (!size) size = 1;
    size_t at0 = kn_kbuf_view_at(b) + (size_t)index * size;
    int lo = (int)(at0 / KN_ARENA_ALIGN), hi = (int)((at0 + (size_t)n * size - 1) / KN_ARENA_ALIGN);
    unsigned char me = (unsigned char)(1u << at->thread);
    for (int l = lo; l <= hi && l < m->nl; l++) {
        if (write && m->wk[l] < 0) m->wk[l] = at->kernel;
        if (write && m->wk[l] == at->kernel) m->wm[l] |= me;
        m->lm[l] = write ? me : m->lm[l] | me; /* the caches holding it, as xcore's */
    }
}

/* Whether the storage b's line lb, arriving after o's line lo, takes it over. */
static int mis(const tmap *o, int lo, const tmap *b, int lb) {
    unsigned char w = b->wm[lb];
    return w && (o->lm[lo] & ~w);
}

/* The cost of placing b at off (see above; delta false: only the lines b takes over on
 * arriving, b's share of the plan's total). on[] holds the placed buffers that share
 * none of b's lifetime and overlap [off, off + size). */
static long tp_cost(const kn_kbuf *b, size_t off, const tmap *M, kn_kbuf **on, int non,
                    bool delta) {
    const tmap *mb = &M[b->id];
    size_t size = buf_bytes(b);
    int nl = (int)((size + KN_ARENA_ALIGN - 1) / KN_ARENA_ALIGN);
    if (nl > mb->nl) nl = mb->nl;
    long cost = 0;
    /* by segments of lines over which the same buffers lie */
    for (int l = 0; l < nl;) {
        size_t a = off + (size_t)l * KN_ARENA_ALIGN; /* the line's arena byte */
        size_t stop = off + (size_t)nl * KN_ARENA_ALIGN;
        const kn_kbuf *prev = NULL, *next = NULL, *lo = NULL, *hi = NULL;
        for (int j = 0; j < non; j++) {
            const kn_kbuf *o = on[j];
            size_t oe = o->offset + buf_bytes(o);
            if (a < o->offset) {
                if (o->offset < stop) stop = o->offset;
                continue;
            }
            if (a >= oe) continue;
            if (oe < stop) stop = oe;
            if ((o->first < b->first) && (!prev || o->first > prev->first)) prev = o;
            if ((o->first > b->first) && (!next || o->first < next->first)) next = o;
            if (!lo || o->first < lo->first) lo = o;
            if (!hi || o->first > hi->first) hi = o;
        }
        int le = (int)((stop - off + KN_ARENA_ALIGN - 1) / KN_ARENA_ALIGN);
        if (le <= l) le = l + 1;
        if (!lo) {
            for (; l < le; l++) cost += mis(mb, l, mb, l);
            continue;
        }
        if (!prev) prev = hi; /* cyclic: the run's last occupant of the line */
        if (!next) next = lo;
        const tmap *mp = &M[prev->id], *mn = &M[next->id];
        for (; l < le; l++) {
            a = off + (size_t)l * KN_ARENA_ALIGN;
            int lp = (int)((a - prev->offset) / KN_ARENA_ALIGN);
            int ln = (int)((a - next->offset) / KN_ARENA_ALIGN);
            if (lp >= mp->nl || ln >= mn->nl) continue;
            cost += mis(mp, lp, mb, l) + (delta ? mis(mb, l, mn, ln) - mis(mp, lp, mn, ln) : 0);
        }
    }
    return cost;
}

static int cmp_size_t(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

enum { TP_CANDIDATES = 48, TP_SWEEPS = 2 };

typedef struct tp_work {
    size_t *iv, *cand;
    kn_kbuf **on;
} tp_work;

/* The cheapest offset for v[i] among its candidates that keep the arena within bound:
 * the starts and ends of the gaps among the placed buffers of overlapping lifetimes, and
 * the starts and ends of the placed buffers of other lifetimes lying in them (where the
 * lines were last held in the pattern v[i] brings); `keep` (a sweep: its offset now) is
 * a candidate too. The lowest offset clear of every lifetime-overlapping buffer where no
 * candidate fits; ties go to the lower offset. */
static size_t best_offset(kn_kbuf **v, int n, int i, bool all, const tmap *M, size_t bound,
                          tp_work *W) {
    kn_kbuf *b = v[i];
    size_t size = buf_bytes(b), low = lowest_free(v, n, i, all);
    if (!M[b->id].nl || low + size > bound) return low;
    int ni = 0;
    for (int j = 0; j < n; j++)
        if (other(i, j, all) && lives_overlap(v[j], b)) {
            W->iv[2 * ni] = v[j]->offset;
            W->iv[2 * ni + 1] = v[j]->offset + buf_bytes(v[j]);
            ni++;
        }
    qsort(W->iv, (size_t)ni, 2 * sizeof *W->iv, cmp_size_t);
    int nc = 0;
    if (all) W->cand[nc++] = b->offset;
    size_t g0 = 0;
    for (int j = 0; j <= ni && nc < TP_CANDIDATES; j++) {
        size_t g1 = j < ni ? W->iv[2 * j] : bound;
        if (g1 > bound) g1 = bound;
        if (g1 >= g0 + size) {
            size_t top = (g1 - size) & ~(size_t)(KN_ARENA_ALIGN - 1);
            W->cand[nc++] = g0;
            if (top != g0 && nc < TP_CANDIDATES) W->cand[nc++] = top;
            for (int q = 0; q < n && nc < TP_CANDIDATES; q++) {
                kn_kbuf *o = v[q];
                if (!other(i, q, all) || lives_overlap(o, b)) continue;
                size_t e = o->offset + buf_bytes(o);
                size_t s0 = o->offset,
                       s1 = e >= size ? (e - size) & ~(size_t)(KN_ARENA_ALIGN - 1) : 0;
                if (s0 > g0 && s0 < top) W->cand[nc++] = s0;
                if (s1 > g0 && s1 < top && nc < TP_CANDIDATES) W->cand[nc++] = s1;
            }
        }
        if (j < ni) {
            size_t e = aligned(W->iv[2 * j + 1]);
            if (e > g0) g0 = e;
        }
    }
    long best_cost = -1;
    size_t best = low;
    for (int c = 0; c < nc; c++) {
        size_t off = W->cand[c];
        if (off + size > bound) continue;
        int non = 0;
        for (int q = 0; q < n; q++) {
            kn_kbuf *o = v[q];
            if (other(i, q, all) && !lives_overlap(o, b) && off < o->offset + buf_bytes(o) &&
                o->offset < off + size)
                W->on[non++] = o;
        }
        long cost = tp_cost(b, off, M, W->on, non, true);
        if (best_cost < 0 || cost < best_cost || (cost == best_cost && off < best)) {
            best_cost = cost;
            best = off;
        }
    }
    return best;
}

/* The lines the buffers take over on arriving, over the whole plan: what the placement
 * lowers. */
static long tp_total(kn_kbuf **v, int n, const tmap *M, tp_work *W) {
    long t = 0;
    for (int i = 0; i < n; i++) {
        int non = 0;
        for (int q = 0; q < n; q++)
            if (q != i && !lives_overlap(v[q], v[i]) &&
                v[i]->offset < v[q]->offset + buf_bytes(v[q]) &&
                v[q]->offset < v[i]->offset + buf_bytes(v[i]))
                W->on[non++] = v[q];
        t += tp_cost(v[i], v[i]->offset, M, W->on, non, false);
    }
    return t;
}

static size_t arena_end(kn_kbuf **v, int n) {
    size_t end = 0;
    for (int i = 0; i < n; i++)
        if (v[i]->offset + buf_bytes(v[i]) > end) end = v[i]->offset + buf_bytes(v[i]);
    return aligned(end);
}

/* Places v[0..n) (placed thread-blind in their order) so that the total above is low
 * with the arena within bound: from two starts, (a) each buffer in order at best_offset
 * among those before it, (b) the thread-blind offsets, each then improved TP_SWEEPS times
 * by moving every buffer to its best offset among all the others (a move never raises the
 * total nor leaves the bound); keeps the lower total ((b) on a tie, or where (a) left the
 * bound). Returns the arena's end. */
static size_t place_threads(kn_kbuf **v, int n, const tmap *M, size_t bound) {
    tp_work W;
    W.iv = malloc(2 * ((size_t)n + 1) * sizeof *W.iv);
    W.cand = malloc(((size_t)TP_CANDIDATES + 1) * sizeof *W.cand);
    W.on = malloc(((size_t)n + 1) * sizeof *W.on);
    size_t *blind = malloc(((size_t)n + 1) * sizeof *blind);
    KN_ASSERT(W.iv && W.cand && W.on && blind);
    for (int i = 0; i < n; i++) blind[i] = v[i]->offset;
    long cost[2] = {-1, -1};
    size_t *at[2];
    for (int start = 0; start < 2; start++) {
        at[start] = malloc(((size_t)n + 1) * sizeof *at[start]);
        KN_ASSERT(at[start]);
        for (int i = 0; i < n; i++)
            v[i]->offset = start ? blind[i] : best_offset(v, n, i, false, M, bound, &W);
        if (arena_end(v, n) > bound) continue;
        for (int sweep = 0; sweep < TP_SWEEPS; sweep++)
            for (int i = 0; i < n; i++) v[i]->offset = best_offset(v, n, i, true, M, bound, &W);
        cost[start] = tp_total(v, n, M, &W);
        for (int i = 0; i < n; i++) at[start][i] = v[i]->offset;
    }
    int pick = cost[0] >= 0 && cost[0] < cost[1] ? 0 : 1;
    for (int i = 0; i < n; i++) v[i]->offset = at[pick][i];
    free(at[0]);
    free(at[1]);
    free(blind);
    free(W.iv);
    free(W.cand);
    free(W.on);
    return arena_end(v, n);
}

/* Statements the abstract run may take, estimated from the loops' trip counts before it
 * starts (SqueezeNet and MobileNetV2 43 M, 0.3 s on the EPYC VM); a program over it
 * stays thread-blind (ResNet-18 108 M, ResNet-50 386 M: 0.7 and 1 s; EfficientNet-B0 56 M,
 * the BERT-style encoder 51 M). KILN_THREAD_PLAN_BUDGET overrides it (below 0: none). */
enum { TP_BUDGET = 45000000 };

/* Whether the thread-aware placement applies: more than one thread, a CPU target, one
 * region, not switched off (KILN_THREAD_PLAN=0). */
static bool thread_plan_on(const kn_kprog *p) {
    const char *e = getenv("KILN_THREAD_PLAN");
    if (e && !strcmp(e, "0")) return false;
    return p->threads > 1 && p->nregions == 0 && !p->io_in_arena && p->target &&
           p->target->kind == KN_TARGET_CPU;
}

/* Re-places v[0..n) (placed thread-blind in its order, arena `blind`) thread-aware, the
 * arena within blind + blind / 10; keeps the blind plan when the run is over budget or
 * the arena would not stay within that. Returns the arena size. */
static size_t plan_threads(kn_kprog *p, kn_kbuf **v, int n, size_t blind) {
    const char *be = getenv("KILN_THREAD_PLAN_BUDGET");
    int64_t budget = be && *be ? atoll(be) : TP_BUDGET;
    if (budget >= 0 && traffic(p, NULL) > (double)budget) return blind; /* statements */
    tmap *M = calloc((size_t)p->nbufs + 1, sizeof *M);
    KN_ASSERT(M);
    size_t lines = 0;
    for (int i = 0; i < n; i++) lines += (buf_bytes(v[i]) + KN_ARENA_ALIGN - 1) / KN_ARENA_ALIGN;
    unsigned char *bits = calloc(2 * lines + 1, 1);
    int *ks = malloc((lines + 1) * sizeof *ks);
    KN_ASSERT(bits && ks);
    for (size_t l = 0; l < lines; l++) ks[l] = -1;
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        tmap *m = &M[v[i]->id];
        m->nl = (int)((buf_bytes(v[i]) + KN_ARENA_ALIGN - 1) / KN_ARENA_ALIGN);
        m->wm = bits + 2 * at;
        m->lm = m->wm + m->nl;
        m->wk = ks + at;
        at += (size_t)m->nl;
    }
    tp_ctx T = {.m = M};
    int threads = p->threads < KN_XRUN_MAX_THREADS ? p->threads : KN_XRUN_MAX_THREADS;
    size_t size = blind;
    if (kn_xrun(p, threads, 1, budget, tp_touch, &T)) {
        size_t bound = aligned(blind + blind / 10);
        size = place_threads(v, n, M, bound);
        KN_ASSERT(size <= bound);
    }
    free(bits);
    free(ks);
    free(M);
    return size;
}

/* The thread area (p->threads > 1, one region): every per-thread scratch above the rest
 * of the arena (which ends at `end`), thread h's copies of all of them in a part of its
 * own, [end + h*S, end + (h+1)*S), S being the most bytes the per-thread scratches of one
 * kernel take together; within it, each kernel's packed from the start. So a thread's
 * copies take the same lines in every kernel that has them, lines no other thread and no
 * tensor ever uses (a tensor reusing them would make the thread take each line over from
 * the core that wrote it: docs/benchmarks.md, "Per-thread Winograd scratch"). Returns the
 * arena's new end. */
static size_t thread_area(kn_kprog *p, size_t end) {
    size_t S = 0;
    for (int k = 0; k < p->nkernels; k++) {
        size_t at = 0;
        for (int i = 0; i < p->nbufs; i++) {
            kn_kbuf *b = p->bufs[i];
            if (!b->per_thread || b->first != k) continue;
            KN_ASSERT(b->last == k); /* a scratch lives in its kernel */
            b->offset = end + at;
            at += aligned(kn_kbuf_bytes(b));
        }
        if (at > S) S = at;
    }
    if (!S) return end;
    int copies = 1;
    for (int i = 0; i < p->nbufs; i++) {
        kn_kbuf *b = p->bufs[i];
        if (!b->per_thread || b->first < 0) continue;
        b->thread_stride = S;
        if (b->copies > copies) copies = b->copies;
    }
    return end + S * (size_t)copies;
}

/* The most bytes a memory plan may take: 2^60 (1 EiB, more than any 64-bit machine
 * addresses) on a 64-bit host. Below it no offset, end or sum the placements compute (nor
 * the thread-aware plan's + 10% and the thread area above it) can wrap size_t: a fuzzed
 * model's buffer of 2^61 int64 elements took 2^64 bytes, planned as 0 (an arena of 128
 * bytes, compiled for every target), and two of 2^63 bytes summed past SIZE_MAX. */
#define PLAN_MAX_BYTES (SIZE_MAX >> 4)

/* b's bytes in *out, rounded up to the alignment, times copies; false past PLAN_MAX_BYTES. */
static bool bytes_within(const kn_kbuf *b, size_t copies, size_t *out) {
    size_t n, esz = kn_dtype_get(b->dtype)->size;
    if (b->numel < 0 || __builtin_mul_overflow((size_t)b->numel, esz, &n) || n > PLAN_MAX_BYTES)
        return false;
    return !__builtin_mul_overflow(aligned(n), copies, out) && *out <= PLAN_MAX_BYTES;
}

/* Refuses (KN_ELIMIT) a program one of whose buffers, or whose planned buffers together
 * (an upper bound of any arena the placements give: each buffer goes at or below the sum
 * of those before it, every copy of a per-thread scratch counted), pass PLAN_MAX_BYTES,
 * naming the buffer that crossed it, its value and its kernel's node. Needs lifetimes. */
static kn_status plan_fits(kn_ctx *cx, const kn_kprog *p) {
    size_t copies = 1, total = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (p->bufs[i]->per_thread && (size_t)p->bufs[i]->copies > copies)
            copies = (size_t)p->bufs[i]->copies;
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        bool io = b->kind == KB_INPUT || b->kind == KB_OUTPUT;
        bool in_plan = (b->kind == KB_TEMP || b->kind == KB_SCRATCH || (p->io_in_arena && io)) &&
                       b->first >= 0; /* planned(), before in place gives any an alias */
        size_t n, sum = total;
        bool ok = bytes_within(b, b->per_thread ? copies : 1, &n);
        if (ok && in_plan) ok = !__builtin_add_overflow(total, n, &sum) && sum <= PLAN_MAX_BYTES;
        if (ok) {
            total = sum;
            continue;
        }
        const kn_node *at =
            b->first >= 0 && b->first < p->nkernels ? p->kernels[b->first]->node : NULL;
        return kn_diag(cx, at, KN_ELIMIT,
                       "the memory plan would pass %zu bytes, the most it may hold, at buffer "
                       "'%s'%s%s%s: %lld elements of %zu bytes%s, after %zu bytes of buffers",
                       (size_t)PLAN_MAX_BYTES, b->name, b->onnx ? " (value '" : "",
                       b->onnx ? b->onnx : "", b->onnx ? "')" : "", (long long)b->numel,
                       kn_dtype_get(b->dtype)->size, b->per_thread ? " per thread" : "",
                       in_plan ? total : (size_t)0);
    }
    return KN_OK;
}

kn_status kn_kpass_plan(kn_ctx *cx, kn_kprog *p) {
    kn_kprog_lifetimes(p);
    kn_status fs = plan_fits(cx, p);
    if (fs) return fs;
    kn_status vs = kn_plan_views(cx, p);
    if (vs) return vs;
    kn_kprog_lifetimes(p);
    in_place(p, false);
    io_lifetimes(p);
    kn_kbuf **v = calloc((size_t)p->nbufs + 1, sizeof *v);
    KN_ASSERT(v);
    int n = 0;
    /* several threads and one region: per-thread scratch in a thread area of its own */
    bool area = p->threads > 1 && p->nregions == 0;
    for (int i = 0; i < p->nbufs; i++) {
        kn_kbuf *b = p->bufs[i];
        b->region = 0;
        b->thread_stride = 0;
        if (planned(p, b) && b->first >= 0 && !(area && b->per_thread)) v[n++] = b;
    }
    qsort(v, (size_t)n, sizeof *v, by_size);
    double *tb = calloc((size_t)p->nbufs + 1, sizeof *tb);
    KN_ASSERT(tb);
    traffic(p, tb);
    for (int i = 0; i < p->nbufs; i++) /* in-place results' traffic is their storage's */
        if (p->bufs[i]->alias) tb[kn_kbuf_storage(p->bufs[i])->id] += tb[i];
    kn_status st = KN_OK;
    if (p->nregions > 0)
        st = place_regions(cx, p, v, n, tb);
    else
        p->arena_size = place_best(v, n);
    if (area) p->arena_size = thread_area(p, p->arena_size);
    for (int i = 0; i < p->nbufs; i++) /* in-place aliases live in their storage's region */
        p->bufs[i]->region = kn_kbuf_storage(p->bufs[i])->region;
    /* each region's share of the arena's traffic */
    p->arena_traffic = 0;
    for (int r = 0; r < KN_MAX_REGIONS; r++) p->region_traffic[r] = 0;
    for (int i = 0; i < n; i++) { /* v: the planned storage, aliases' traffic included */
        p->arena_traffic += tb[v[i]->id];
        p->region_traffic[v[i]->region] += tb[v[i]->id];
    }
    free(tb);
    size_t bound = 0;
    for (int r = 0; r < KN_MAX_REGIONS; r++) p->region_lower_bound[r] = 0;
    for (int k = 0; k < p->nkernels; k++) {
        size_t live = 0, rlive[KN_MAX_REGIONS] = {0};
        for (int i = 0; i < n; i++)
            if (v[i]->first <= k && k <= v[i]->last) {
                live += aligned(buf_bytes(v[i]));
                rlive[v[i]->region] += aligned(buf_bytes(v[i]));
            }
        for (int i = 0; area && i < p->nbufs; i++) { /* each copy, rounded up */
            const kn_kbuf *b = p->bufs[i];
            if (b->per_thread && b->first <= k && k <= b->last && b->first >= 0)
                live += aligned(kn_kbuf_bytes(b)) * (size_t)(b->copies > 1 ? b->copies : 1);
        }
        if (live > bound) bound = live;
        for (int r = 0; r < p->nregions; r++)
            if (rlive[r] > p->region_lower_bound[r]) p->region_lower_bound[r] = rlive[r];
    }
    free(v);
    p->arena_lower_bound = bound;
    /* a 32-bit microcontroller addresses 4 GiB: a larger arena cannot exist there (a
     * fuzzed model's two live 4.6e18-byte tensors planned 9.2e18 bytes, and compiled) */
    if (!st && p->target && p->target->index_bits == 32 && p->arena_size > UINT32_MAX) {
        const kn_kbuf *big = NULL; /* named with its node: the buffer planned largest */
        for (int i = 0; i < p->nbufs; i++)
            if (planned(p, p->bufs[i]) && p->bufs[i]->first >= 0 &&
                (!big || buf_bytes(p->bufs[i]) > buf_bytes(big)))
                big = p->bufs[i];
        st = kn_diag(cx, big ? p->kernels[big->first]->node : NULL, KN_ELIMIT,
                     "the memory plan needs an arena of %zu bytes, more than the 4 GiB target "
                     "%s addresses (its largest buffer: '%s'%s%s%s, %zu bytes)",
                     p->arena_size, p->target->name, big ? big->name : "none",
                     big && big->onnx ? " (value '" : "", big && big->onnx ? big->onnx : "",
                     big && big->onnx ? "')" : "", big ? buf_bytes(big) : (size_t)0);
    }
    return st;
}

/* Pass threadplan (after parallel, whose splits it reads): the thread-aware placement
 * above, over the plan's storage with the lifetimes and in-place choices the plan made;
 * the thread area is laid out again above the new end. */
kn_status kn_kpass_threadplan(kn_ctx *cx, kn_kprog *p) {
    (void)cx;
    if (!thread_plan_on(p)) return KN_OK;
    kn_kbuf **v = calloc((size_t)p->nbufs + 1, sizeof *v);
    KN_ASSERT(v);
    int n = 0;
    for (int i = 0; i < p->nbufs; i++) {
        kn_kbuf *b = p->bufs[i];
        if (planned(p, b) && b->first >= 0 && !b->per_thread) v[n++] = b;
    }
    qsort(v, (size_t)n, sizeof *v, by_size);
    size_t blind = place_best(v, n); /* the plan's offsets, as kn_kpass_plan set them */
    p->arena_size = thread_area(p, plan_threads(p, v, n, blind));
    free(v);
    return KN_OK;
}
