/* Cross-core bytes: how much data each kernel's threads read that another thread wrote,
 * from the parallel splits alone (no clock, so the figure does not move with the load
 * of the machine). Written into --dump-schedule files (passes/schedule.c).
 *
 * The program is run abstractly: every loop is iterated and every integer local and
 * index evaluated, but no float is computed; each load and store of the arena, a graph
 * input or an output marks the 64-byte lines it touches. A parallel loop split into
 * tasks (passes/parallel.c; what codegen/llvm runs on the pool) gives its iterations to
 * threads as runtime/kn_pool.c deals them out: task t runs iterations [t*chunk,
 * (t+1)*chunk), and with T threads thread h first runs tasks [ceil(h*n/T),
 * ceil((h+1)*n/T)), the ranges it keeps from run to run when no thread is late. Any
 * other statement runs on the calling thread (thread 0).
 *
 * Each line has the set of threads whose caches hold it (infinite caches, the MESI
 * picture): a store by thread h leaves it with h alone, a load by h adds h. A load by a
 * thread not in the set of a line some thread wrote counts its 64 bytes against the
 * kernel (`read`: the line crossed cores to be read); a store by h into a line another
 * thread holds counts too (`write`: it takes the line over). The program runs twice
 * and the second run is counted, the steady state of a benchmark's repeated runs (the
 * graph inputs, written once by the caller, are then in both caches).
 *
 * What the evaluation cannot see (an index loaded from data, a while loop whose
 * condition is data) is left out: such an access is not counted, such a loop body is
 * not run. A select with a known condition looks only at its taken operand, so padded
 * reads that a select skips are not counted; a branch on data runs both arms. */
#include "ir/kir.h"
#include "passes/schedule.h"
#include "passes/xcore.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { LINE = 64, MAX_WHILE = 1 << 20 };

/* The abstract run: which thread runs each statement, the values of integer locals. */
typedef struct xc {
    const kn_kprog *p;
    int threads;
    int64_t *val;
    unsigned char *known;
    kn_xrun_touch fn; /* told of every access to a buffer that is not a constant */
    void *user;
    int64_t budget; /* statements still allowed (below 0: no limit) */
    bool over;      /* the budget ran out: the run stopped */
    kn_xrun_at at;  /* what fn is told besides the access */
    /* memo of `loads`: open addressing on the node's address (cap a power of 2) */
    const kn_kx **key;
    unsigned char *has;
    size_t cap, used;
    /* pure-read loops (rl_*): per loop, its free variables; the executions seen */
    struct rloop *rl;
    size_t rl_cap, rl_used;
    uint64_t *seen; /* fingerprints of (loop, stint, free values); 0: empty */
    size_t seen_cap, seen_used;
    uint64_t stint; /* changes whenever the thread running may change */
} xc;

/* A loop whose body stores and copies nothing and assigns no integer variable declared
 * outside it: run again by the same thread with the same values of the variables its
 * loads' indices, conditions and trip counts depend on, it touches the same lines, all of
 * which that thread already holds, so it changes nothing (xcore's counts, the plan's
 * maps): the run skips it. free: those variables declared outside it (-1 ends). */
typedef struct rloop {
    const kn_ks *loop;
    bool pure;
    int nfree;
    int *free;
} rloop;

static bool intlike_tab[KN_DTYPE_MAX + 1], intlike_set;

static bool is_intlike(kn_dtype t) {
    return (unsigned)t <= KN_DTYPE_MAX ? intlike_tab[t] : kn_dtype_get(t)->is_int;
}

static void intlike_init(void) {
    if (intlike_set) return;
    for (int t = 0; t <= KN_DTYPE_MAX; t++)
        intlike_tab[t] = t == KN_BOOL || (t != KN_UNDEF && kn_dtype_get((kn_dtype)t)->is_int);
    intlike_set = true;
}

/* The value of integer expression x; *ok false if it is not known (a float, a load). */
static int64_t eval(xc *X, const kn_kx *x, bool *ok) {
    if (!*ok) return 0;
    switch (x->op) {
    case KX_CONST:
        if (!is_intlike(x->dtype)) break;
        return x->i;
    case KX_VAR:
        if (!X->known[x->var]) break;
        return X->val[x->var];
    case KX_SELECT: {
        int64_t c = eval(X, x->a[0], ok);
        return eval(X, x->a[c ? 1 : 2], ok);
    }
    case KX_CAST:
        if (!is_intlike(x->dtype) || !is_intlike(x->a[0]->dtype)) break;
        return eval(X, x->a[0], ok);
    case KX_NEG: return -eval(X, x->a[0], ok);
    case KX_ABS: {
        int64_t a = eval(X, x->a[0], ok);
        return a < 0 ? -a : a;
    }
    case KX_NOT: return !eval(X, x->a[0], ok);
    case KX_BNOT: return ~eval(X, x->a[0], ok);
    default: {
        if (x->op < KX_ADD || x->op > KX_LOR || x->op == KX_FMOD || x->op == KX_POW) break;
        if (!is_intlike(x->a[0]->dtype) || !is_intlike(x->a[1]->dtype)) break;
        int64_t a = eval(X, x->a[0], ok), b = eval(X, x->a[1], ok);
        if (!*ok) return 0;
        switch (x->op) {
        case KX_ADD: return a + b;
        case KX_SUB: return a - b;
        case KX_MUL: return a * b;
        case KX_DIV:
            if (!b) break;
            return a / b;
        case KX_MOD:
            if (!b) break;
            return a % b;
        case KX_MIN: return a < b ? a : b;
        case KX_MAX: return a > b ? a : b;
        case KX_AND: return a & b;
        case KX_OR: return a | b;
        case KX_XOR: return a ^ b;
        case KX_SHL: return b >= 0 && b < 63 ? a << b : 0;
        case KX_SHR: return b >= 0 && b < 63 ? a >> b : 0;
        case KX_LT: return a < b;
        case KX_LE: return a <= b;
        case KX_GT: return a > b;
        case KX_GE: return a >= b;
        case KX_EQ: return a == b;
        case KX_NE: return a != b;
        case KX_LAND: return a && b;
        case KX_LOR: return a || b;
        default: break;
        }
    }
    }
    *ok = false;
    return 0;
}

/* Elements [index, index + n) of buffer b touched by the current thread. */
static void touch(xc *X, const kn_kbuf *b, int64_t index, int64_t n, bool write) {
    if (b->kind == KB_CONST) return;
    if (index < 0) {
        n += index;
        index = 0;
    }
    if (index + n > b->numel) n = b->numel - index;
    if (n <= 0) return;
    X->fn(X->user, &X->at, b, index, n, write);
}

static size_t slot_of(const xc *X, const kn_kx *x) {
    size_t h = ((uintptr_t)x >> 4) * (size_t)0x9E3779B97F4A7C15ull;
    return (h ^ (h >> 29)) & (X->cap - 1);
}

/* Whether x loads a buffer that is not a constant anywhere in it (memoized: the
 * expression trees of unrolled micro-kernels are walked at every iteration). */
static bool loads(xc *X, const kn_kx *x) {
    if (!x) return false;
    size_t i = slot_of(X, x);
    while (X->key[i]) {
        if (X->key[i] == x) return X->has[i];
        i = (i + 1) & (X->cap - 1);
    }
    bool r = (x->op == KX_LOAD && x->buf->kind != KB_CONST) || loads(X, x->a[0]) ||
             loads(X, x->a[1]) || loads(X, x->a[2]);
    if (2 * (X->used + 1) > X->cap) { /* grow, then insert */
        size_t oc = X->cap;
        const kn_kx **ok = X->key;
        unsigned char *oh = X->has;
        X->cap *= 2;
        X->key = calloc(X->cap, sizeof *X->key);
        X->has = calloc(X->cap, 1);
        KN_ASSERT(X->key && X->has);
        for (size_t j = 0; j < oc; j++)
            if (ok[j]) {
                size_t q = slot_of(X, ok[j]);
                while (X->key[q]) q = (q + 1) & (X->cap - 1);
                X->key[q] = ok[j];
                X->has[q] = oh[j];
            }
        free(ok);
        free(oh);
    }
    i = slot_of(X, x);
    while (X->key[i]) i = (i + 1) & (X->cap - 1);
    X->key[i] = x;
    X->has[i] = r;
    X->used++;
    return r;
}

/* The loads in x (those a known select does not skip). */
static void scan(xc *X, const kn_kx *x) {
    if (!x || !loads(X, x)) return;
    if (x->op == KX_SELECT) {
        bool ok = true;
        int64_t c = eval(X, x->a[0], &ok);
        scan(X, x->a[0]);
        if (ok) {
            scan(X, x->a[c ? 1 : 2]);
            return;
        }
    }
    for (int i = 0; i < 3; i++) scan(X, x->a[i]);
    if (x->op == KX_LOAD && x->buf->kind != KB_CONST) {
        bool ok = true;
        int64_t at = eval(X, x->a[0], &ok);
        if (ok) touch(X, x->buf, at, kx_load_elems(x), false);
    }
}

/* ---- pure-read loops ---- */

typedef struct rl_scan {
    const kn_kprog *p;
    unsigned char *inside; /* per variable: declared in the loop */
    unsigned char *need;   /* per variable: an index, condition or trip count uses it */
    const kn_kx **def;     /* per variable: a value assigned to it in the loop (first) */
    bool pure;
} rl_scan;

static void rl_vars(rl_scan *R, const kn_kx *x) {
    if (!x) return;
    if (x->op == KX_VAR) R->need[x->var] = 1;
    for (int i = 0; i < 3; i++) rl_vars(R, x->a[i]);
}

/* The variables the arena loads of x depend on: indices, and select conditions. */
static void rl_expr(rl_scan *R, const kn_kx *x) {
    if (!x) return;
    if (x->op == KX_LOAD && x->buf->kind != KB_CONST) rl_vars(R, x->a[0]);
    if (x->op == KX_SELECT) rl_vars(R, x->a[0]);
    if (x->op == KX_STR || x->op == KX_REGEX) R->pure = false;
    for (int i = 0; i < 3; i++) rl_expr(R, x->a[i]);
}

static void rl_stmt(rl_scan *R, const kn_ks *s) {
    if (!s || !R->pure) return;
    switch (s->kind) {
    case KS_BLOCK:
        for (int i = 0; i < s->n; i++) rl_stmt(R, s->body[i]);
        return;
    case KS_FOR:
        R->inside[s->var] = 1;
        rl_vars(R, s->ext);
        rl_expr(R, s->ext);
        rl_stmt(R, s->body[0]);
        return;
    case KS_DECL:
    case KS_SET:
        if (s->kind == KS_DECL)
            R->inside[s->var] = 1;
        else if (!R->inside[s->var] && is_intlike(R->p->var_dtype[s->var]))
            R->pure = false; /* an integer the code after the loop may use */
        if (!R->def[s->var])
            R->def[s->var] = s->value;
        else if (R->def[s->var] != s->value)
            R->pure = R->pure && !is_intlike(R->p->var_dtype[s->var]); /* keep it simple */
        rl_expr(R, s->value);
        return;
    case KS_IF:
        rl_vars(R, s->cond);
        rl_expr(R, s->cond);
        rl_stmt(R, s->body[0]);
        if (s->n > 1) rl_stmt(R, s->body[1]);
        return;
    case KS_PREFETCH: return;
    default: R->pure = false; return; /* stores, copies, while loops */
    }
}

static size_t rl_slot(const xc *X, const kn_ks *s) {
    size_t h = ((uintptr_t)s >> 4) * (size_t)0x9E3779B97F4A7C15ull;
    return (h ^ (h >> 29)) & (X->rl_cap - 1);
}

/* What the run knows of loop s (analysed the first time). */
static const rloop *rl_get(xc *X, const kn_ks *s) {
    size_t i = rl_slot(X, s);
    while (X->rl[i].loop) {
        if (X->rl[i].loop == s) return &X->rl[i];
        i = (i + 1) & (X->rl_cap - 1);
    }
    const kn_kprog *p = X->p;
    size_t nv = (size_t)p->nvars + 1;
    rl_scan R = {.p = p, .pure = true};
    R.inside = calloc(nv, 1);
    R.need = calloc(nv, 1);
    R.def = calloc(nv, sizeof *R.def);
    KN_ASSERT(R.inside && R.need && R.def);
    R.inside[s->var] = 1;
    rl_stmt(&R, s->body[0]);
    rloop r = {.loop = s, .pure = R.pure};
    if (r.pure) {
        /* what the needed locals of the loop are computed from, to a fixed point */
        for (bool more = true; more;) {
            more = false;
            for (int v = 0; v < p->nvars; v++)
                if (R.need[v] == 1 && R.def[v]) {
                    R.need[v] = 2;
                    unsigned char *before = malloc(nv);
                    KN_ASSERT(before);
                    memcpy(before, R.need, nv);
                    rl_vars(&R, R.def[v]);
                    for (int u = 0; u < p->nvars; u++)
                        if (R.need[u] && !before[u]) more = true;
                    free(before);
                }
        }
        for (int v = 0; v < p->nvars; v++) r.nfree += R.need[v] && !R.inside[v];
        r.free = malloc(((size_t)r.nfree + 1) * sizeof *r.free);
        KN_ASSERT(r.free);
        int k = 0;
        for (int v = 0; v < p->nvars; v++)
            if (R.need[v] && !R.inside[v]) r.free[k++] = v;
    }
    free(R.inside);
    free(R.need);
    free(R.def);
    if (2 * (X->rl_used + 1) > X->rl_cap) { /* grow, then insert */
        size_t oc = X->rl_cap;
        rloop *old = X->rl;
        X->rl_cap *= 2;
        X->rl = calloc(X->rl_cap, sizeof *X->rl);
        KN_ASSERT(X->rl);
        for (size_t j = 0; j < oc; j++)
            if (old[j].loop) {
                size_t q = rl_slot(X, old[j].loop);
                while (X->rl[q].loop) q = (q + 1) & (X->rl_cap - 1);
                X->rl[q] = old[j];
            }
        free(old);
    }
    i = rl_slot(X, s);
    while (X->rl[i].loop) i = (i + 1) & (X->rl_cap - 1);
    X->rl[i] = r;
    X->rl_used++;
    return &X->rl[i];
}

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
    return h * 0xBF58476D1CE4E5B9ull;
}

/* Whether this execution of pure-read loop s repeats one of the same stint (then it is
 * skipped); records it otherwise. */
static bool rl_repeat(xc *X, const kn_ks *s) {
    const rloop *r = rl_get(X, s);
    if (!r->pure) return false;
    uint64_t h = mix(mix(0x1234567ull, (uintptr_t)s), X->stint);
    for (int i = 0; i < r->nfree; i++) {
        int v = r->free[i];
        if (!X->known[v]) return false;
        h = mix(h, (uint64_t)X->val[v]);
    }
    if (!h) h = 1;
    if (2 * (X->seen_used + 1) > X->seen_cap) { /* full: forget (only a memo) */
        if (X->seen_cap < ((size_t)1 << 22)) {
            free(X->seen);
            X->seen_cap *= 2;
            X->seen = calloc(X->seen_cap, sizeof *X->seen);
            KN_ASSERT(X->seen);
        } else {
            memset(X->seen, 0, X->seen_cap * sizeof *X->seen);
        }
        X->seen_used = 0;
    }
    size_t i = (size_t)(h ^ (h >> 31)) & (X->seen_cap - 1);
    while (X->seen[i]) {
        if (X->seen[i] == h) return true;
        i = (i + 1) & (X->seen_cap - 1);
    }
    X->seen[i] = h;
    X->seen_used++;
    return false;
}

static void run(xc *X, const kn_ks *s);

static void run_loop(xc *X, const kn_ks *s, int64_t extent) {
    bool split = !X->at.in_task && kn_ks_task_loop(s);
    if (!split) {
        if (extent > 1 && rl_repeat(X, s)) return;
        for (int64_t i = 0; i < extent && !X->over; i++) {
            X->val[s->var] = i;
            X->known[s->var] = 1;
            run(X, s->body[0]);
        }
        return;
    }
    /* the emitters' tasks (kn_ks_task_chunk) in runtime/kn_pool.c's ranges */
    int64_t n, chunk = kn_ks_task_chunk(s, &n);
    int T = X->threads;
    X->at.in_task = true;
    for (int64_t i = 0; i < extent && !X->over; i++) {
        int64_t t = i / chunk;
        int h = 0;
        while (h + 1 < T && t >= ((h + 1) * n + T - 1) / T) h++;
        if (h != X->at.thread || i == 0) X->stint++;
        X->at.thread = h;
        X->val[s->var] = i;
        X->known[s->var] = 1;
        run(X, s->body[0]);
    }
    X->at.thread = 0;
    X->at.in_task = false;
    X->stint++;
}

static void run(xc *X, const kn_ks *s) {
    if (!s || X->over) return;
    if (X->budget >= 0 && --X->budget < 0) {
        X->over = true;
        return;
    }
    bool ok = true;
    switch (s->kind) {
    case KS_BLOCK:
        for (int i = 0; i < s->n; i++) run(X, s->body[i]);
        return;
    case KS_FOR: {
        int64_t e = s->ext ? eval(X, s->ext, &ok) : s->extent;
        if (s->ext) scan(X, s->ext);
        if (ok) run_loop(X, s, e);
        return;
    }
    case KS_DECL:
    case KS_SET: {
        scan(X, s->value);
        int64_t v = s->value && is_intlike(s->value->dtype) && kx_lanes(s->value) == 1
                        ? eval(X, s->value, &ok)
                        : (ok = false, 0);
        X->val[s->var] = v;
        X->known[s->var] = ok;
        return;
    }
    case KS_STORE: {
        scan(X, s->value);
        scan(X, s->index);
        int64_t at = eval(X, s->index, &ok);
        if (ok) touch(X, s->buf, at, kn_ks_store_elems(s), true);
        return;
    }
    case KS_COPY: {
        scan(X, s->index);
        scan(X, s->src_index);
        scan(X, s->count);
        int64_t n = eval(X, s->count, &ok);
        bool ok2 = ok;
        int64_t src = eval(X, s->src_index, &ok2);
        if (ok2) touch(X, s->src, src, n, false);
        int64_t dst = eval(X, s->index, &ok);
        if (ok) touch(X, s->buf, dst, n, true);
        return;
    }
    case KS_IF: {
        scan(X, s->cond);
        int64_t c = eval(X, s->cond, &ok);
        if (!ok || c) run(X, s->body[0]);
        if ((!ok || !c) && s->n > 1) run(X, s->body[1]);
        return;
    }
    case KS_WHILE:
        for (int i = 0; i < MAX_WHILE && !X->over; i++) {
            ok = true;
            scan(X, s->cond);
            if (!eval(X, s->cond, &ok) || !ok) break;
            run(X, s->body[0]);
        }
        return;
    default: return;
    }
}

bool kn_xrun(const kn_kprog *p, int threads, int passes, int64_t budget, kn_xrun_touch fn,
             void *user) {
    if (threads < 1) threads = 1;
    if (threads > KN_XRUN_MAX_THREADS) threads = KN_XRUN_MAX_THREADS;
    xc X = {.p = p, .threads = threads, .fn = fn, .user = user, .budget = budget};
    intlike_init();
    X.val = calloc((size_t)p->nvars + 1, sizeof *X.val);
    X.known = calloc((size_t)p->nvars + 1, 1);
    X.cap = 1 << 12;
    X.key = calloc(X.cap, sizeof *X.key);
    X.has = calloc(X.cap, 1);
    X.rl_cap = 1 << 10;
    X.rl = calloc(X.rl_cap, sizeof *X.rl);
    X.seen_cap = 1 << 12;
    X.seen = calloc(X.seen_cap, sizeof *X.seen);
    KN_ASSERT(X.val && X.known && X.key && X.has && X.rl && X.seen);
    for (int pass = 0; pass < passes && !X.over; pass++) {
        X.at.pass = pass;
        for (int k = 0; k < p->nkernels && !X.over; k++) {
            X.at.kernel = k;
            X.stint++;
            memset(X.known, 0, (size_t)p->nvars + 1);
            run(&X, p->kernels[k]->body);
        }
    }
    free(X.val);
    free(X.known);
    free(X.key);
    free(X.has);
    for (size_t i = 0; i < X.rl_cap; i++) free(X.rl[i].free);
    free(X.rl);
    free(X.seen);
    return !X.over;
}

/* ---- cross-core bytes: kn_xrun's accesses on the arena's lines ---- */

typedef struct xb {
    size_t *base; /* per buffer id: byte address of element 0 (SIZE_MAX: not tracked) */
    size_t *more; /* per buffer id: a per-thread scratch's copies for the threads past those
                     the plan holds (kn_kbuf.copies; when counting more threads than the
                     program was compiled for), past the arena, one after another */
    size_t nlines;
    unsigned char *hold;  /* per line: bit h set when thread h's cache holds it */
    double *read, *write; /* per kernel */
} xb;

static void xb_touch(void *user, const kn_xrun_at *at, const kn_kbuf *b, int64_t index, int64_t n,
                     bool write) {
    xb *B = user;
    if (B->base[b->id] == SIZE_MAX) return;
    int64_t size = (int64_t)kn_dtype_get(b->dtype)->size;
    if (size < 1) size = 1;
    size_t base = B->base[b->id];
    if (b->per_thread && at->in_task && at->thread > 0) { /* the running thread's copy */
        int c = b->copies > 1 ? b->copies : 1;
        base = at->thread < c
                   ? base + (size_t)at->thread * kn_kbuf_thread_stride(b)
                   : B->more[b->id] + (size_t)(at->thread - c) * kn_kbuf_thread_stride(b);
    }
    size_t lo = (base + (size_t)(index * size)) / LINE;
    size_t hi = (base + (size_t)((index + n) * size) - 1) / LINE;
    unsigned char me = (unsigned char)(1u << at->thread);
    bool count = at->pass == 1;
    for (size_t l = lo; l <= hi && l < B->nlines; l++) {
        unsigned char h = B->hold[l];
        if (write) {
            if (count && (h & ~me)) B->write[at->kernel] += LINE;
            B->hold[l] = me;
        } else if (!(h & me)) {
            if (count && h) B->read[at->kernel] += LINE;
            B->hold[l] = h | me;
        }
    }
}

double kn_xcore_bytes(const kn_kprog *p, int threads, double *read, double *write) {
    if (threads < 1) threads = 1;
    if (threads > KN_XRUN_MAX_THREADS) threads = KN_XRUN_MAX_THREADS;
    xb B = {.read = read, .write = write};
    B.base = malloc(((size_t)p->nbufs + 1) * sizeof *B.base);
    B.more = calloc((size_t)p->nbufs + 1, sizeof *B.more);
    KN_ASSERT(B.base && B.more);
    /* the arena's regions one after another, then each input and output */
    size_t region_at[KN_MAX_REGIONS + 1] = {0}, end = 0;
    for (int r = 0; r < p->nregions; r++) region_at[r + 1] = region_at[r] + p->region_size[r];
    end = p->nregions ? region_at[p->nregions] : p->arena_size;
    end = (end + LINE - 1) / LINE * LINE;
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        B.base[i] = SIZE_MAX;
        if (b->kind == KB_CONST || b->view) continue;
        size_t bytes = (size_t)b->numel * kn_dtype_get(b->dtype)->size;
        if (b->kind == KB_TEMP || b->kind == KB_SCRATCH || p->io_in_arena) {
            B.base[i] = (p->nregions ? region_at[b->region] : 0) + kn_kbuf_arena_offset(b);
        } else {
            B.base[i] = end;
            end += (bytes + LINE - 1) / LINE * LINE;
        }
    }
    for (int i = 0; i < p->nbufs; i++) { /* per-thread copies the plan does not hold */
        const kn_kbuf *b = p->bufs[i];
        int c = b->copies > 1 ? b->copies : 1;
        if (!b->per_thread || B.base[i] == SIZE_MAX || threads <= c) continue;
        B.more[i] = end;
        end += kn_kbuf_thread_stride(b) * (size_t)(threads - c);
    }
    B.nlines = end / LINE + 1;
    B.hold = calloc(B.nlines, 1);
    KN_ASSERT(B.hold);
    for (int k = 0; k < p->nkernels; k++) read[k] = write[k] = 0;
    kn_xrun_at caller = {.pass = -1}; /* the graph inputs, written by the caller */
    for (int i = 0; i < p->nin; i++) {
        const kn_kbuf *b = p->inputs[i];
        if (b && B.base[b->id] != SIZE_MAX && b->numel > 0)
            xb_touch(&B, &caller, b, 0, b->numel, true);
    }
    kn_xrun(p, threads, 2, -1, xb_touch, &B); /* the second run is counted */
    double total = 0;
    for (int k = 0; k < p->nkernels; k++) total += read[k];
    free(B.base);
    free(B.more);
    free(B.hold);
    return total;
}
