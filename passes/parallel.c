/* Parallel-loop analysis of the kernel IR, and how to split the parallel loops.
 * requires: a lowered program; breaks: nothing (sets KN_LOOP_PARALLEL annotations,
 * task counts and work-group sizes; on CPUs it may collapse loops, which hides their
 * indices from later affine analyses: run it after plan).
 *
 * A top-level loop of a kernel (a FOR directly in the kernel's body block) is marked
 * parallel when its iterations are independent:
 *  - every store and copy inside it writes at `v*c + rest`, where v is the loop's
 *    index, c a constant stride, and rest an affine expression of inner loop indices
 *    (and constants);
 *  - every access to a buffer the loop writes has that form with the same c, and
 *    together they span fewer than c elements (vector lanes and copy lengths count),
 *    so each iteration keeps to its own region;
 *  - no scalar declared outside the loop is assigned inside it.
 * An integer local that is declared and never assigned again (an index computed once,
 * as the tiled lowerings do) counts as the expression it was declared with.
 * Anything the analysis cannot see through (divisions, selects, loaded indices in a
 * written buffer's index) keeps the loop sequential, which is always correct. The
 * OpenCL emitter maps parallel loops to the NDRange; CPU threading can use them too. */
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "passes/pass.h"
#include "passes/schedule.h"
#include "targets/target.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* An affine form: sum of coef[i] * var[i] + k over the n variables it names (only the
 * variables of the index, not every variable of the program: ResNet-50's program has
 * about 10^5, and forms sized to all of them made the analysis quadratic). */
typedef struct affine {
    int *var;
    int64_t *coef;
    int n, cap;
    int64_t k;
    bool ok;
} affine;

typedef struct pctx {
    const kn_kprog *p;
    int64_t *extent;       /* extent of each loop variable inside the loop (-1: not a loop) */
    unsigned char *inside; /* variables declared inside the loop being analyzed */
    unsigned char *fixed;  /* indices of enclosing loops: constant within one iteration */
    const kn_kx **let;     /* integer locals assigned once: their value (else NULL) */
    int *slot;             /* each variable's term in the one live affine form (-1: none) */
    int *touched;          /* variables whose extent/inside/fixed the current loop set */
    int ntouched, cap_touched;
    int nvars;
} pctx;

static void aff_init(affine *a) {
    *a = (affine){.ok = true};
}

/* Forgets the form's terms; P->slot is back to all -1 (one form is live at a time). */
static void aff_free(pctx *P, affine *a) {
    for (int i = 0; i < a->n; i++) P->slot[a->var[i]] = -1;
    free(a->var);
    free(a->coef);
}

static void aff_term(pctx *P, affine *a, int v, int64_t scale) {
    int s = P->slot[v];
    if (s < 0) {
        if (a->n == a->cap) {
            a->cap = a->cap ? a->cap * 2 : 8;
            a->var = realloc(a->var, (size_t)a->cap * sizeof *a->var);
            a->coef = realloc(a->coef, (size_t)a->cap * sizeof *a->coef);
            KN_ASSERT(a->var && a->coef);
        }
        s = P->slot[v] = a->n++;
        a->var[s] = v;
        a->coef[s] = 0;
    }
    if (__builtin_add_overflow(a->coef[s], scale, &a->coef[s])) a->ok = false;
}

static int64_t aff_coef(const pctx *P, const affine *a, int v) {
    return P->slot[v] >= 0 ? a->coef[P->slot[v]] : 0;
}

/* a += scale * x */
static void aff_add(pctx *P, affine *a, const kn_kx *x, int64_t scale) {
    if (!a->ok) return;
    int64_t t; /* a term past int64 (a stride of 2^63 - 1 times 4 bytes): not analyzable */
    switch (x->op) {
    case KX_CONST:
        if (__builtin_mul_overflow(scale, x->i, &t) || __builtin_add_overflow(a->k, t, &a->k))
            a->ok = false;
        return;
    case KX_VAR:
        if (P->let[x->var]) { /* an index computed once: stands for its expression */
            aff_add(P, a, P->let[x->var], scale);
            return;
        }
        if (P->extent[x->var] < 0 && !P->fixed[x->var]) { /* a scalar local: unknown value */
            a->ok = false;
            return;
        }
        aff_term(P, a, x->var, scale);
        return;
    case KX_ADD:
        aff_add(P, a, x->a[0], scale);
        aff_add(P, a, x->a[1], scale);
        return;
    case KX_SUB:
        aff_add(P, a, x->a[0], scale);
        if (scale == INT64_MIN)
            a->ok = false;
        else
            aff_add(P, a, x->a[1], -scale);
        return;
    case KX_MUL:
        if (x->a[1]->op == KX_CONST && !__builtin_mul_overflow(scale, x->a[1]->i, &t))
            aff_add(P, a, x->a[0], t);
        else if (x->a[0]->op == KX_CONST && x->a[1]->op != KX_CONST &&
                 !__builtin_mul_overflow(scale, x->a[0]->i, &t))
            aff_add(P, a, x->a[1], t);
        else
            a->ok = false;
        return;
    case KX_CAST:
        if (kn_dtype_get(x->dtype)->is_int && kn_dtype_get(x->a[0]->dtype)->is_int)
            aff_add(P, a, x->a[0], scale);
        else
            a->ok = false;
        return;
    default: a->ok = false; return;
    }
}

/* Index form relative to loop variable v: stride c and [lo, hi] of the rest, using the
 * extents of inner loops; *k its constant term. mod: the period (below), 0 for
 * c * extent(v), else at least that. False if not analyzable. */
static bool region(pctx *P, const kn_kx *index, int v, int64_t mod, int64_t *c, int64_t *lo,
                   int64_t *hi, int64_t *k) {
    affine a;
    aff_init(&a);
    aff_add(P, &a, index, 1);
    bool ok = a.ok;
    *c = aff_coef(P, &a, v);
    *k = a.k;
    /* terms that are multiples of the period (c * extent(v), or a larger one) move whole
     * periods: they cannot make two iterations meet (see loop_parallel), so they are
     * left out */
    int64_t period = 0;
    if (*c > 0 && P->extent[v] > 0 && __builtin_mul_overflow(*c, P->extent[v], &period)) ok = false;
    if (period && mod > period) period = mod;
    *lo = *hi = period ? a.k % period + (a.k % period < 0 ? period : 0) : a.k;
    for (int t = 0; ok && t < a.n; t++) {
        int i = a.var[t];
        if (i == v || !a.coef[t] || P->fixed[i]) continue;
        if (period && a.coef[t] % period == 0) continue;
        if (!P->inside[i] || P->extent[i] < 1) { /* outer or unknown-extent variable */
            ok = false;
            break;
        }
        int64_t span;
        if (__builtin_mul_overflow(a.coef[t], P->extent[i] - 1, &span) ||
            __builtin_add_overflow(span > 0 ? *hi : *lo, span, span > 0 ? hi : lo)) {
            ok = false;
            break;
        }
    }
    aff_free(P, &a);
    return ok && *c > 0;
}

typedef struct access {
    const kn_kbuf *buf;
    const kn_kx *index;
    const kn_kx *count; /* copies: the element count; NULL for single elements */
    int lanes;          /* vector loads and stores: elements from index on */
    bool write;
} access;

typedef struct accesses {
    access *v;
    int n, cap;
    bool bad; /* something that forbids parallel execution */
} accesses;

static void push(accesses *A, const kn_kbuf *b, const kn_kx *index, const kn_kx *count, int lanes,
                 bool w) {
    if (A->n == A->cap) {
        A->cap = A->cap ? A->cap * 2 : 32;
        A->v = realloc(A->v, (size_t)A->cap * sizeof *A->v);
        KN_ASSERT(A->v);
    }
    A->v[A->n++] = (access){b, index, count, lanes, w};
}

/* The accesses inside a loop, collected with the kernel-IR visitor (ir/kwalk.c). */
typedef struct acc_walk {
    kn_kwalker w;
    pctx *P;
    accesses *A;
} acc_walk;

/* Records that the loop being analyzed set variable v's entries (loop_parallel resets
 * only those: resetting all of them for every loop was quadratic too). */
static void touch(pctx *P, int v) {
    if (P->ntouched == P->cap_touched) {
        P->cap_touched = P->cap_touched ? P->cap_touched * 2 : 64;
        P->touched = realloc(P->touched, (size_t)P->cap_touched * sizeof *P->touched);
        KN_ASSERT(P->touched);
    }
    P->touched[P->ntouched++] = v;
}

static bool acc_enter(kn_kwalker *w, kn_ks *s) {
    pctx *P = ((acc_walk *)w)->P;
    accesses *A = ((acc_walk *)w)->A;
    switch (s->kind) {
    case KS_FOR:
        touch(P, s->var);
        P->inside[s->var] = 1;
        P->extent[s->var] = s->ext ? 0 : s->extent; /* computed trip counts: unknown */
        break;
    case KS_DECL:
        touch(P, s->var);
        P->inside[s->var] = 1;
        break;
    case KS_SET:
        if (!P->inside[s->var]) A->bad = true; /* carried across iterations */
        break;
    case KS_STORE: push(A, s->buf, s->index, NULL, kn_ks_store_elems(s), true); break;
    case KS_COPY:
        push(A, s->buf, s->index, s->count, 1, true);
        push(A, s->src, s->src_index, s->count, 1, false);
        break;
    default: break;
    }
    return true;
}

static void acc_expr(kn_kwalker *w, kn_kx *x) {
    if (x->op == KX_LOAD) push(((acc_walk *)w)->A, x->buf, x->a[0], NULL, kx_load_elems(x), false);
}

static void walk_s(pctx *P, accesses *A, kn_ks *s) {
    acc_walk W = {.w = {.enter = acc_enter, .expr = acc_expr}, .P = P, .A = A};
    kn_kwalk(&W.w, s);
}

/* The elements access a reaches relative to loop variable v: stride c and [lo, hi],
 * counting vector lanes and copy lengths. False if not analyzable. */
static bool access_span(pctx *P, const access *a, int v, int64_t mod, int64_t *c, int64_t *lo,
                        int64_t *hi, int64_t *k) {
    if (!region(P, a->index, v, mod, c, lo, hi, k)) return false;
    *hi += a->lanes - 1;
    if (a->count) {
        if (a->count->op != KX_CONST) return false;
        *hi += a->count->i - 1;
    }
    return true;
}

/* An access's span relative to the loop variable, and the storage it touches: key 0
 * for a graph input, output or weight (only the same buffer shares it), 1 for an arena
 * temporary (every buffer planned into the same storage shares it). */
typedef struct span {
    int tag;
    const kn_kbuf *key;
    bool ok, write;
    int64_t c, lo, hi, k;
    int at; /* the access's index */
} span;

/* The spans S[i, j) (one storage) keep iterations apart: one stride c, and together
 * less than c wide. */
static bool spans_apart(const span *S, int i, int j) {
    int64_t lo = S[i].lo, hi = S[i].hi;
    for (int m = i; m < j; m++) {
        if (!S[m].ok || S[m].c != S[i].c) return false;
        lo = S[m].lo < lo ? S[m].lo : lo;
        hi = S[m].hi > hi ? S[m].hi : hi;
    }
    return hi - lo < S[i].c;
}

/* spans_apart with a longer period M: the accesses' constant terms (one of them, for
 * the row of a register tile stored one image row on: a channels-last tensor's channel
 * count) as M, where every other term is a multiple of M and c * extent(v) <= M. A
 * convolution of 144 channels in 4 blocks of 32 and a partial block of 16 (MobileNetV2's
 * and EfficientNet-B0's 56x56 expansions) stores block b's tile rows at b*32 + 144*r:
 * with the period 4 * 32 = 128 the rows looked like they met the next block, and the 4
 * blocks ran on one thread. */
static bool spans_apart_mod(pctx *P, const access *A, span *S, int i, int j, int v) {
    int64_t ext = P->extent[v];
    if (ext < 1 || !S[i].ok || S[i].c <= 0) return false;
    for (int t = i; t < j && t < i + 16; t++) {
        int64_t M = S[t].k < 0 ? -S[t].k : S[t].k;
        if (M < S[i].c * ext || M == S[i].c * ext) continue;
        span *T = malloc((size_t)(j - i) * sizeof *T);
        KN_ASSERT(T);
        for (int m = i; m < j; m++) {
            T[m - i] = S[m];
            T[m - i].ok = access_span(P, &A[S[m].at], v, M, &T[m - i].c, &T[m - i].lo, &T[m - i].hi,
                                      &T[m - i].k);
        }
        bool fit = spans_apart(T, 0, j - i);
        free(T);
        if (fit) return true;
    }
    return false;
}

static int cmp_span(const void *x, const void *y) {
    const span *a = x, *b = y;
    if (a->tag != b->tag) return a->tag < b->tag ? -1 : 1;
    if (a->key != b->key) return (uintptr_t)a->key < (uintptr_t)b->key ? -1 : 1;
    return 0;
}

/* outer: the loops enclosing `loop` (perfectly nested); their indices are constant
 * during one of its iterations */
static bool loop_parallel(pctx *P, const kn_ks *loop, kn_ks *const *outer, int nouter) {
    P->ntouched = 0;
    for (int i = 0; i < nouter; i++) {
        touch(P, outer[i]->var);
        P->fixed[outer[i]->var] = 1;
    }
    accesses A = {0};
    touch(P, loop->var);
    P->inside[loop->var] = 1;
    P->extent[loop->var] = loop->ext ? 0 : loop->extent;
    walk_s(P, &A, loop->body[0]);
    bool ok = !A.bad && !loop->ext;
    int v = loop->var;
    /* every access to written storage: the same stride c, and together they span less
     * than c, so iteration v keeps to [v*c + lo, v*c + hi] plus multiples of the period
     * P = c * extent(v) (region() leaves those out): two iterations v1 != v2 meet only if
     * (v1 - v2)*c + (lo1 - lo2) is a multiple of P, but its magnitude is at most
     * (extent-1)*c + c-1 < P, so it is 0, and then |v1 - v2|*c = |lo1 - lo2| < c: v1 = v2.
     * (Rows of a tile stored N apart by a loop over the N columns are independent this
     * way.) Each access's span is found once and the accesses are grouped by storage,
     * not compared in pairs (ResNet-50's largest kernels have thousands). */
    span *S = ok && A.n ? malloc((size_t)A.n * sizeof *S) : NULL;
    KN_ASSERT(S || !ok || !A.n);
    for (int i = 0; ok && i < A.n; i++) {
        const kn_kbuf *b = A.v[i].buf;
        bool temp = b->kind == KB_TEMP || b->kind == KB_SCRATCH;
        S[i] = (span){
            .tag = temp, .key = temp ? kn_kbuf_storage(b) : b, .write = A.v[i].write, .at = i};
        S[i].ok = access_span(P, &A.v[i], v, 0, &S[i].c, &S[i].lo, &S[i].hi, &S[i].k);
    }
    if (ok && A.n) qsort(S, (size_t)A.n, sizeof *S, cmp_span);
    for (int i = 0, j; ok && i < A.n; i = j) {
        bool written = false;
        for (j = i; j < A.n && !cmp_span(&S[i], &S[j]); j++) written |= S[j].write;
        if (!written) continue;
        ok = spans_apart(S, i, j) || spans_apart_mod(P, A.v, S, i, j, v);
    }
    free(S);
    free(A.v);
    for (int i = 0; i < P->ntouched; i++) {
        int t = P->touched[i];
        P->inside[t] = P->fixed[t] = 0;
        P->extent[t] = -1;
    }
    return ok;
}

/* Marks loop (inside the perfectly nested `outer` loops) and, when it is parallel, up
 * to two more perfectly nested loops inside it: an NDRange has at most three dims.
 * Outside any parallel loop, a loop of one iteration whose body holds several
 * statements has each of them looked at (a channel-tiled convolution's loop over its
 * full blocks of output channels, then its partial block: EfficientNet's projections
 * onto 80 and 112 channels ran on one thread for want of this); the GPU path keeps to
 * perfect nests, the only ones an NDRange maps. */
static void mark(pctx *P, kn_ks *loop, kn_ks **outer, int nouter, int depth) {
    if (loop->kind != KS_FOR || loop->ext || nouter >= KN_MAX_RANK) return;
    bool par = loop->extent > 1 && loop_parallel(P, loop, outer, nouter);
    if (par) loop->annot |= KN_LOOP_PARALLEL;
    /* descend through parallel loops (up to 3) and through loops of one iteration */
    if ((par && depth < 2) || (!par && loop->extent == 1)) {
        bool gpu = P->p->target && P->p->target->kind == KN_TARGET_GPU;
        if (loop->body[0]->n != 1 && (par || depth > 0 || gpu)) return;
        outer[nouter] = loop;
        for (int i = 0; i < loop->body[0]->n; i++)
            mark(P, loop->body[0]->body[i], outer, nouter + 1, depth + par);
    }
}

/* Records the integer scalar locals that are declared and never assigned again. */
typedef struct let_walk {
    kn_kwalker w;
    pctx *P;
    unsigned char *set;
} let_walk;

static bool let_enter(kn_kwalker *w, kn_ks *s) {
    let_walk *W = (let_walk *)w;
    if (s->kind == KS_DECL && s->width <= 1 && kn_dtype_get(s->dtype)->is_int && !W->set[s->var])
        W->P->let[s->var] = s->value;
    if (s->kind == KS_SET) {
        W->set[s->var] = 1;
        W->P->let[s->var] = NULL;
    }
    return true;
}

static void find_lets(pctx *P, kn_ks *s, unsigned char *set) {
    let_walk W = {.w = {.enter = let_enter}, .P = P, .set = set};
    kn_kwalk(&W.w, s);
}

/* ---- the split ----
 *
 * CPU targets: each outermost parallel loop of a kernel runs as `tasks` chunks of
 * consecutive iterations on the thread pool (runtime/kn_pool.c). The work of
 * the kernel (statement executions, vector statements counted per lane) decides how
 * many: at least MIN_TASK_WORK per task, so a task's work outweighs scheduling it, at
 * most MAX_TASKS; a kernel too small for two tasks runs on the calling thread. A nest
 * whose effort (statement executions, a vector statement counted once: about 9 per ns
 * on one core of the x86 machines measured) is below MIN_SPLIT_EFFORT, about 30 us,
 * also runs on the calling thread: waking a sleeping pool worker and joining it costs
 * 5-20 us on an idle 2-core machine and far more when the cores are busy, so splitting
 * LeNet-5's first convolution (28 us, 14 tasks) or the MLP's matrix-vector products
 * made two threads slower than one (docs/benchmarks.md). Effort counts compute, not the
 * constant data a nest streams: a matrix-vector product (a classifier Gemm, 1280 x 1000
 * floats) is one vector statement per 64 bytes of weights it reads once, so its effort
 * is small while its time is that of reading 5 MB (0.3-0.5 ms on one core of the Zen 4
 * VM). The weights (KB_CONST buffers) a nest loads therefore add BYTES_PER_EFFORT^-1 of
 * effort per byte: at about 18 GB/s from outside the core's caches, 2 bytes take as
 * long as an effort unit; split, each core reads half of them. When the
 * outermost parallel loop has fewer than COLLAPSE_BELOW iterations and its body is
 * one parallel loop, the two are collapsed into one (ResNet's late layers have few
 * channel blocks), so two threads get balanced work; such a nest gets at most
 * COLLAPSED_TASKS tasks per iteration of the outer loop. Finer tasks cost more than they
 * balance: every claim moves the task counter's cache line between the cores (300 ns
 * on the Zen 4 VM), and on SqueezeNet's expand3x3 convolutions (2-8 blocks x rows,
 * docs/benchmarks.md "Splitting few-block convolutions over rows") 55 tasks took 10-20%
 * longer than 2 when both cores ran at full speed, 8 tasks 4-6%, while both beat 2 tasks
 * by 10-15% when one core was slowed down. A nest under MIN_SPLIT_EFFORT that writes
 * many bytes (a padded copy, a Winograd input transform, the packing of a 1x1
 * convolution's input: one vector copy per 64 bytes) counts them as effort too
 * (BYTES_PER_EFFORT) and gets at most MOVE_TASKS tasks, but only when the tensors it
 * reads were written by split nests (sources_split): data that one thread wrote is in
 * that core's cache, and moving half of it to the other core cost more than the copy.
 * A copy into a kernel's scratch that its lowering split to match the kernel's own
 * split (KN_LOOP_WHOLE: the stem's staged input by rows, stages_for_split) is split
 * whatever wrote its sources: its reader would otherwise take half of it across.
 * A short nest over data split nests left spread over both cores (the encoder's Softmax,
 * LayerNorms and Slices after its split matrix products: 2-30 us each on one thread) is
 * split likewise, into 2 to MOVE_TASKS tasks, when its effort plus the bytes it loads and
 * stores (BYTES_PER_EFFORT) reach MIN_SPREAD_EFFORT: on the caller alone it first pulls
 * the worker's half across (at 2 threads each such kernel took 1.5-6x its 1-thread
 * time), split, each core mostly reads what it wrote. What a nest reads back of its own
 * stores (Softmax's exps) says nothing of where its input lies and is not looked at.
 * Such a split pays only when it has work to share, so a spread nest also needs (a) at
 * least SPREAD_TASK_EFFORT statement executions for each of two tasks: a vector copy
 * moves 64 bytes a statement, and SqueezeNet's 1x1 input packings (190 KB, 3,008
 * statements, a few us) took 1.2-1.4x as long split in 2, the pool's fork and join
 * (about 1 us idle, 5 us on average per loop in a loaded 2-thread run, KILN_POOL_TRACE)
 * eating what the second core saves; (b) an outer loop of its own with at least two
 * iterations: the padded copy of a Winograd convolution (SqueezeNet's 55x55 expand3x3)
 * is a parallel loop of one iteration, so splitting it meant collapsing its channel
 * blocks into it, a split by channel between the squeeze convolution and the input
 * transform that both split by rows, and the kernel took 1.9-2.1x as long at 2 threads;
 * (c) data it loads: a nest that only stores (a padded buffer's zero borders) has no
 * data on either core to be near (sources_split is vacuously true for it). All three
 * are A/B-measured in docs/benchmarks.md ("The spread split, made to pay").
 * Microcontrollers run everything
 * on one thread. OpenCL devices: the parallel loops are the NDRange, and the pass
 * chooses the work-group size along its innermost dimension. A schedule file's
 * `tasks` or `wg` for a kernel overrides the choice. */

enum {
    MIN_TASK_WORK = 16384,
    MAX_TASKS = 64,
    COLLAPSE_BELOW = 16,
    MIN_SPLIT_EFFORT = 300000,
    BYTES_PER_EFFORT = 2,
    COLLAPSED_TASKS = 4,
    MOVE_TASKS = 8,
    MIN_SPREAD_EFFORT = 100000,
    SPREAD_TASK_EFFORT = 2048,
    MIN_BAND = 2,
    MIN_BAND_ROWS = 16,
    /* bytes an iteration of the inner loop of a nest split like its producer must store:
     * a cache line, else the bands' rows share lines between the threads anyway, and a
     * band of a few elements a row defeats the vector loop (a Slice of a MatMulInteger's
     * columns, split by its producer's column blocks: 4 columns x 128 rows a band,
     * 0.029 ms against 0.0023 ms by rows, docs/quantization.md "Dynamic quantization") */
    BAND_ROW_BYTES = 64,
    SMALL_SOURCE = 64
};

/* The sum over nest s of own(t) for each execution of each statement t in it: loops
 * multiply their bodies by their trip count (16 for a run-time extent or a while loop);
 * an if or while counts its own term (its condition) once per execution. */
static double per_run(const kn_ks *s, double (*own)(const kn_ks *)) {
    if (!s) return 0;
    switch (s->kind) {
    case KS_FOR: return (double)(s->ext ? 16 : s->extent) * per_run(s->body[0], own);
    case KS_BLOCK: {
        double c = 0;
        for (int i = 0; i < s->n; i++) c += per_run(s->body[i], own);
        return c;
    }
    case KS_IF:
        return own(s) + per_run(s->body[0], own) + (s->n > 1 ? per_run(s->body[1], own) : 0);
    case KS_WHILE: return 16 * (own(s) + per_run(s->body[0], own));
    default: return own(s);
    }
}

/* A constant-length copy's length in elements, else -1. */
static double copy_len(const kn_ks *s) {
    return s->count && s->count->op == KX_CONST ? (double)s->count->i : -1;
}

/* cost: statement executions, vector statements counted once per lane */
static double cost_own(const kn_ks *s) {
    switch (s->kind) {
    case KS_IF: return 1;
    case KS_WHILE: return 0;
    case KS_COPY: return copy_len(s) >= 0 ? copy_len(s) / 4 : 16;
    default: return s->value ? (double)kx_lanes(s->value) : 1;
    }
}
static double cost(const kn_ks *s) {
    return per_run(s, cost_own);
}

/* effort: statement executions, a vector statement counting as one: roughly
 * proportional to the time s takes on one core (a vector operation costs about as much
 * as a scalar) */
static double effort_own(const kn_ks *s) {
    switch (s->kind) {
    case KS_WHILE: return 0;
    case KS_COPY: return copy_len(s) >= 0 ? copy_len(s) / 16 : 16;
    default: return 1;
    }
}
static double effort(const kn_ks *s) {
    return per_run(s, effort_own);
}

/* Bytes the expression x loads from the arena and graph inputs (not weights), vector
 * loads counted per lane. */
static double x_loaded(const kn_kx *x) {
    if (!x) return 0;
    double b = 0;
    for (int i = 0; i < 3; i++) b += x_loaded(x->a[i]);
    if (x->op == KX_LOAD && x->buf->kind != KB_CONST)
        b += (double)kx_load_elems(x) * (double)kn_dtype_get(x->buf->dtype)->size;
    return b;
}

/* stored bytes: vector stores counted per lane, copies by their length */
static double stored_own(const kn_ks *s) {
    switch (s->kind) {
    case KS_COPY:
        return copy_len(s) >= 0 ? copy_len(s) * (double)kn_dtype_get(s->buf->dtype)->size : 0;
    case KS_STORE: return (double)kn_ks_store_elems(s) * (double)kn_dtype_get(s->buf->dtype)->size;
    default: return 0;
    }
}
static double stored_bytes(const kn_ks *s) {
    return per_run(s, stored_own);
}

/* loaded bytes: from the arena and graph inputs (copies by their length) */
static double loaded_own(const kn_ks *s) {
    switch (s->kind) {
    case KS_IF:
    case KS_WHILE: return x_loaded(s->cond);
    case KS_COPY:
        return copy_len(s) >= 0 && s->src->kind != KB_CONST
                   ? copy_len(s) * (double)kn_dtype_get(s->src->dtype)->size
                   : 0;
    default: return x_loaded(s->value) + x_loaded(s->index);
    }
}
static double loaded_bytes(const kn_ks *s) {
    return per_run(s, loaded_own);
}

/* The arena tensors and graph inputs a nest loads (up to 16 distinct). */
typedef struct src_walk {
    kn_kwalker w;
    const kn_kbuf *buf[16];
    int n;
    bool more;
} src_walk;

static void src_expr(kn_kwalker *w, kn_kx *x) {
    src_walk *W = (src_walk *)w;
    if (x->op != KX_LOAD || x->buf->kind == KB_CONST) return;
    for (int i = 0; i < W->n; i++)
        if (W->buf[i] == x->buf) return;
    if (W->n < 16)
        W->buf[W->n++] = x->buf;
    else
        W->more = true;
}

/* Whether the data nest o of kernel k reads was left spread over the threads: each
 * tensor it loads was last written by a split nest (an earlier nest of k, or a kernel
 * before k with more than one task). A graph input, or a tensor written on the calling
 * thread alone (SqueezeNet's Concats are copies on the caller), is in the caller's
 * cache: splitting a nest that only moves it sends half of it to the other core first
 * (on the Zen 4 VM's slow state this cost SqueezeNet 4-8%). */
static bool sources_split(kn_kprog *p, int k, kn_ks *const *nests, int i) {
    src_walk W = {.w = {.expr = src_expr}};
    kn_kwalk(&W.w, nests[i]);
    if (W.more) return false;
    unsigned char *use = malloc((size_t)p->nbufs + 1), *own = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use && own);
    kn_kernel_uses(nests[i], own);
    bool ok = true;
    double all = 0;
    for (int b = 0; b < W.n; b++) all += (double)kn_kbuf_bytes(W.buf[b]);
    for (int b = 0; b < W.n && ok; b++) {
        const kn_kbuf *st = kn_kbuf_storage(W.buf[b]);
        /* a small operand (a squeeze-and-excite's scale beside the tensor it scales) says
         * little of where the data lies: the calling thread computed EfficientNet-B0's
         * 16-144 scales alone, so its 0.6-1.8 MB Muls of split tensors ran on one thread,
         * which first read the other core's half (passes/xcore.c) */
        if (W.n > 1 && (double)kn_kbuf_bytes(W.buf[b]) * SMALL_SOURCE < all) continue;
        bool self = false; /* what the nest reads back of its own stores (Softmax's exps) */
        for (int id = 0; id < p->nbufs && !self; id++)
            self = (own[id] & 2) && kn_kbuf_storage(p->bufs[id]) == st;
        if (self) continue;
        int found = 0; /* 1: written by a split nest, -1: by a serial one */
        for (int m = i - 1; m >= 0 && !found; m--) { /* earlier nests of this kernel */
            memset(use, 0, (size_t)p->nbufs + 1);
            kn_kernel_uses(nests[m], use);
            for (int id = 0; id < p->nbufs && !found; id++)
                if ((use[id] & 2) && kn_kbuf_storage(p->bufs[id]) == st)
                    found = nests[m]->tasks > 1 ? 1 : -1;
        }
        for (int j = k - 1; j >= 0 && !found; j--) {
            memset(use, 0, (size_t)p->nbufs + 1);
            kn_kernel_uses(p->kernels[j]->body, use);
            for (int id = 0; id < p->nbufs && !found; id++)
                if ((use[id] & 2) && kn_kbuf_storage(p->bufs[id]) == st)
                    found = p->kernels[j]->sched.tasks > 1 ? 1 : -1;
        }
        ok = found > 0;
    }
    free(use);
    free(own);
    return ok;
}

/* The distinct constant buffers (weights) a nest loads, or (data) the distinct arena
 * tensors and graph inputs. */
typedef struct const_walk {
    kn_kwalker w;
    const kn_kbuf *buf[64];
    int n;
    bool data;
    double bytes; /* of every distinct buffer, each counted once in full */
} const_walk;

static void const_expr(kn_kwalker *w, kn_kx *x) {
    const_walk *W = (const_walk *)w;
    if (x->op != KX_LOAD || (x->buf->kind == KB_CONST) == W->data) return;
    for (int i = 0; i < W->n; i++)
        if (W->buf[i] == x->buf) return;
    if (W->n < (int)(sizeof W->buf / sizeof *W->buf)) W->buf[W->n++] = x->buf;
    W->bytes += (double)kn_kbuf_bytes(x->buf); /* past 64 buffers: possibly counted again */
}

/* Bytes of constant data nest s reads (each weight buffer it loads, in full). */
static double const_bytes(kn_ks *s) {
    const_walk W = {.w = {.expr = const_expr}};
    kn_kwalk(&W.w, s);
    return W.bytes;
}

/* Bytes of the tensors nest s reads (each buffer it loads that is not a weight, in
 * full, not per load). */
static double data_bytes(kn_ks *s) {
    const_walk W = {.w = {.expr = const_expr}, .data = true};
    kn_kwalk(&W.w, s);
    return W.bytes;
}

/* The outermost parallel loops of a kernel: each top-level statement of its body that
 * is (under loops of one iteration, each statement of theirs) a parallel loop. */
static int outer_parallel(kn_ks *body, kn_ks **out, int n, int cap) {
    for (int i = 0; i < body->n && n < cap; i++) {
        kn_ks *s = body->body[i];
        while (s->kind == KS_FOR && !s->ext && !(s->annot & KN_LOOP_PARALLEL) && s->extent == 1 &&
               s->body[0]->n == 1)
            s = s->body[0]->body[0];
        if (s->kind == KS_FOR && !s->ext && !(s->annot & KN_LOOP_PARALLEL) && s->extent == 1)
            n = outer_parallel(s->body[0], out, n, cap);
        else if (s->kind == KS_FOR && !s->ext && (s->annot & KN_LOOP_PARALLEL))
            out[n++] = s;
    }
    return n;
}

/* Whether the weights (constant buffers) nest s loads are addressed through loop
 * variable v: v, or a local declared from an expression that mentions one such, in a
 * constant load's index. */
typedef struct dep_walk {
    kn_kwalker w;
    unsigned char *dep; /* per variable: depends on v */
    bool hit;
} dep_walk;

static bool mentions(const kn_kx *x, const unsigned char *dep) {
    if (!x) return false;
    if (x->op == KX_VAR && dep[x->var]) return true;
    for (int i = 0; i < 3; i++)
        if (mentions(x->a[i], dep)) return true;
    return false;
}

static bool dep_enter(kn_kwalker *w, kn_ks *s) {
    dep_walk *W = (dep_walk *)w;
    if (s->kind == KS_DECL && mentions(s->value, W->dep)) W->dep[s->var] = 1;
    return !W->hit;
}

static void dep_expr(kn_kwalker *w, kn_kx *x) {
    dep_walk *W = (dep_walk *)w;
    if (x->op == KX_LOAD && x->buf->kind == KB_CONST && mentions(x->a[0], W->dep)) W->hit = true;
}

static bool indexes_weights(const kn_kprog *p, kn_ks *s, int v) {
    dep_walk W = {.w = {.enter = dep_enter, .expr = dep_expr},
                  .dep = calloc((size_t)p->nvars + 1, 1)};
    KN_ASSERT(W.dep);
    W.dep[v] = 1;
    kn_kwalk(&W.w, s);
    free(W.dep);
    return W.hit;
}

static bool is_unit_loop(const kn_ks *s) {
    return s->kind == KS_FOR && !s->ext && !(s->annot & KN_LOOP_PARALLEL) && s->extent == 1 &&
           s->body[0]->n == 1;
}

/* The single statement of block b, seen through loops of one iteration around a single
 * statement (a convolution's loops over its one image and one group); NULL where b holds
 * more than one statement. */
static kn_ks *single_inner(kn_ks *b) {
    if (b->n != 1) return NULL;
    kn_ks *s = b->body[0];
    while (is_unit_loop(s)) s = s->body[0]->body[0];
    return s;
}

/* Collapses loop o and the single parallel loop inside it (seen through loops of one
 * iteration, single_inner, whose indices become 0) into one loop over both.
 * outer_major: o's index becomes t / ei and the inner index t % ei, so consecutive
 * iterations (one task's) share o's index; else the inner index is t / eo and o's
 * t % eo, so a task takes consecutive iterations of the inner loop with every index of
 * o. The indices are declared at the top of the inner body. */
static bool collapse(kn_kprog *p, kn_ks *o, bool outer_major) {
    kn_ks *ob = o->body[0];
    if (ob->n != 1 || (o->annot & KN_LOOP_WHOLE)) return false;
    kn_ks *in = single_inner(ob);
    if (in->kind != KS_FOR || in->ext || !(in->annot & KN_LOOP_PARALLEL) || in->extent < 1)
        return false;
    int64_t ei = in->extent, eo = o->extent;
    kn_lower *L = kl_builder(NULL, p);
    /* the loops of one iteration between o and in: their indices are 0 */
    for (kn_ks *u = ob->body[0]; u != in; u = u->body[0]->body[0])
        kn_block_insert(p, in->body[0], 0, kn_ks_decl(p, u->var, kx_int(L, 0)));
    int t = kn_kprog_new_var(p, KN_I64, 1);
    kn_kx *tv = kx_var(L, t);
    kn_kx *iv =
        outer_major ? kx_bin(L, KX_MOD, tv, kx_int(L, ei)) : kx_bin(L, KX_DIV, tv, kx_int(L, eo));
    kn_kx *ov =
        outer_major ? kx_bin(L, KX_DIV, tv, kx_int(L, ei)) : kx_bin(L, KX_MOD, tv, kx_int(L, eo));
    kn_block_insert(p, in->body[0], 0, kn_ks_decl(p, in->var, iv));
    kn_block_insert(p, in->body[0], 0, kn_ks_decl(p, o->var, ov));
    kl_builder_destroy(L);
    o->var = t;
    o->extent *= ei;
    o->body[0] = in->body[0];
    return true;
}

/* Splits nest o (outer loop over c, one parallel loop over r inside it) into `bands`
 * bands of consecutive iterations of the inner loop, the new outer loop of o:
 *
 *   for b in [0, bands):              o, parallel (its tasks take consecutive bands)
 *     for c in [0, C):
 *       for rr in [0, B):             B = ceil(R / bands)
 *         r = b*B + rr
 *         if (r < R) { body }         (only when B does not divide R)
 *
 * so a task runs its band of rows for every index of the outer loop, each of them in
 * order (a plane's rows one after another, as before the split: collapsing the two
 * loops with the inner index major instead took SqueezeNet's second MaxPool 24% more
 * CPU time, jumping between channel planes at every row). Returns the bands made. */
static int64_t band(kn_kprog *p, kn_ks *o, int64_t bands) {
    kn_ks *ob = o->body[0], *in = ob->body[0];
    int64_t R = in->extent, B = (R + bands - 1) / bands;
    bands = (R + B - 1) / B;
    kn_lower *L = kl_builder(NULL, p);
    int b = kn_kprog_new_var(p, KN_I64, 1), rr = kn_kprog_new_var(p, KN_I64, 1), r = in->var;
    kn_ks *ib = in->body[0];
    kn_ks *nb = kl_block_new(L);
    kl_block_append(
        L, nb,
        kn_ks_decl(
            p, r, kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_var(L, b), kx_int(L, B)), kx_var(L, rr))));
    if (R % B) {
        kn_ks *g = kn_arena_alloc(p->arena, sizeof *g);
        KN_ASSERT(g);
        *g = (kn_ks){.kind = KS_IF, .cond = kx_bin(L, KX_LT, kx_var(L, r), kx_int(L, R)), .n = 2};
        g->body = kn_arena_array(p->arena, 2, sizeof *g->body);
        KN_ASSERT(g->body);
        g->body[0] = ib;
        g->body[1] = NULL;
        kl_block_append(L, nb, g);
    } else {
        for (int i = 0; i < ib->n; i++) kl_block_append(L, nb, ib->body[i]);
    }
    in->var = rr;
    in->extent = B;
    in->annot &= ~(unsigned)KN_LOOP_PARALLEL;
    in->body[0] = nb;
    kn_ks *cf = kn_arena_alloc(p->arena, sizeof *cf);
    KN_ASSERT(cf);
    *cf = (kn_ks){.kind = KS_FOR, .var = o->var, .extent = o->extent, .n = 1};
    cf->body = kn_arena_alloc(p->arena, sizeof *cf->body);
    KN_ASSERT(cf->body);
    cf->body[0] = ob;
    kn_ks *top = kl_block_new(L);
    kl_block_append(L, top, cf);
    o->var = b;
    o->extent = bands;
    o->body[0] = top;
    kl_builder_destroy(L);
    return bands;
}

/* The work-group size along the innermost NDRange dimension of nest o: its extent up to
 * the target's largest work-group max, a divisor of the extent where one of at least
 * max/4 exists (no idle work-items in the last group). */
static int workgroup(const kn_ks *o, int max) {
    const kn_ks *in = o;
    while (in->body[0]->n == 1 && in->body[0]->body[0]->kind == KS_FOR &&
           (in->body[0]->body[0]->annot & KN_LOOP_PARALLEL))
        in = in->body[0]->body[0];
    int64_t g = in->extent;
    int wg = g < max ? (int)g : max;
    for (int d = wg; d >= max / 4 && g >= max; d--) /* a divisor wastes no work-items */
        if (g % d == 0) return d;
    return wg;
}

/* ---- splitting like the producer ----
 *
 * Which way a nest of two parallel loops (a pooling's channels x rows) is split decides
 * which elements of its input each thread reads; the kernel that wrote the input split
 * it one way too. Each tensor (by storage) records the dimension along which its last
 * writer's split loop advanced, counted from the innermost dimension of the buffer
 * (0: columns, 1: rows of an NCHW tensor, 2: channels), or WRITTEN_SERIAL when the
 * calling thread wrote it alone. A nest without weights whose inner parallel loop
 * advances its reads along the dimension the producer split, and whose outer loop does
 * not, is collapsed so that each task takes consecutive iterations of the inner loop
 * with every index of the outer one: SqueezeNet's first MaxPool, split by its 64
 * channels after a convolution split by its 111 output rows, read half of the
 * convolution's output from the other core (1.6 MB a run, passes/xcore.c); split by its
 * rows, each thread reads the rows it wrote. */
enum { WRITTEN_UNKNOWN = -1, WRITTEN_SERIAL = -2 };

/* Whether x depends on variable v (through integer locals assigned once). */
static bool depends(const pctx *P, const kn_kx *x, int v) {
    if (!x) return false;
    if (x->op == KX_VAR) return x->var == v || (P->let[x->var] && depends(P, P->let[x->var], v));
    for (int i = 0; i < 3; i++)
        if (depends(P, x->a[i], v)) return true;
    return false;
}

/* The coefficient of v in index x when x is affine in v (other variables held fixed). */
static bool coef_of(const pctx *P, const kn_kx *x, int v, int64_t *c) {
    int64_t a, b;
    switch (x->op) {
    case KX_CONST: *c = 0; return true;
    case KX_VAR:
        if (x->var == v) {
            *c = 1;
            return true;
        }
        if (P->let[x->var]) return coef_of(P, P->let[x->var], v, c);
        *c = 0;
        return true;
    case KX_ADD:
    case KX_SUB:
        if (!coef_of(P, x->a[0], v, &a) || !coef_of(P, x->a[1], v, &b)) return false;
        *c = x->op == KX_ADD ? a + b : a - b;
        return true;
    case KX_MUL:
        if (x->a[1]->op == KX_CONST && coef_of(P, x->a[0], v, &a)) {
            *c = a * x->a[1]->i;
            return true;
        }
        if (x->a[0]->op == KX_CONST && coef_of(P, x->a[1], v, &a)) {
            *c = a * x->a[0]->i;
            return true;
        }
        break;
    case KX_CAST:
        if (kn_dtype_get(x->dtype)->is_int && kn_dtype_get(x->a[0]->dtype)->is_int)
            return coef_of(P, x->a[0], v, c);
        break;
    default: break;
    }
    *c = 0;
    return !depends(P, x, v);
}

/* The dimension of b, counted from its innermost, that a step of c elements advances
 * along (-1: none, c < 1). */
static int dim_of(const kn_kbuf *b, int64_t c) {
    if (c < 1) return -1;
    int64_t stride = 1;
    int d = b->rank - 1;
    while (d > 0 && stride * b->dims[d] <= c) stride *= b->dims[d--];
    return b->rank - 1 - d;
}

typedef struct dim_walk {
    kn_kwalker w;
    const pctx *P;
    const kn_kprog *p;
    int *written; /* per storage buffer id (see above) */
    int v, in;    /* the outer and inner loop variables (record: v only) */
    int outer_hit, inner_hit;
    bool record;
} dim_walk;

static bool is_temp(const kn_kbuf *b) {
    return b->kind == KB_TEMP || b->kind == KB_SCRATCH || b->kind == KB_OUTPUT;
}

static void dim_read(dim_walk *W, const kn_kbuf *b, const kn_kx *index);

static bool dim_enter(kn_kwalker *w, kn_ks *s) {
    dim_walk *W = (dim_walk *)w;
    int64_t c;
    if (W->record && s->kind == KS_STORE && is_temp(s->buf) && coef_of(W->P, s->index, W->v, &c)) {
        int id = kn_kbuf_storage(s->buf)->id;
        if (W->written[id] == WRITTEN_UNKNOWN) W->written[id] = dim_of(s->buf, c);
    }
    if (!W->record && s->kind == KS_COPY) /* a row of a padded copy (passes/tile.c) */
        dim_read(W, s->src, s->src_index);
    return true;
}

/* Counts a read of b at index along the outer and the inner loop (see above). */
static void dim_read(dim_walk *W, const kn_kbuf *b, const kn_kx *index) {
    if (!is_temp(b)) return;
    int d = W->written[kn_kbuf_storage(b)->id];
    if (d < 0) return;
    int64_t co, ci;
    if (!coef_of(W->P, index, W->v, &co) || !coef_of(W->P, index, W->in, &ci)) return;
    W->outer_hit += dim_of(b, co) == d;
    W->inner_hit += dim_of(b, ci) == d;
}

static void dim_expr(kn_kwalker *w, kn_kx *x) {
    dim_walk *W = (dim_walk *)w;
    if (!W->record && x->op == KX_LOAD) dim_read(W, x->buf, x->a[0]);
}

/* Sets the entry of each temporary storage nest s writes to `how`. */
static void mark_written(const kn_kprog *p, int *written, kn_ks *s, int how) {
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use);
    kn_kernel_uses(s, use);
    for (int id = 0; id < p->nbufs; id++)
        if ((use[id] & 2) && is_temp(p->bufs[id])) written[kn_kbuf_storage(p->bufs[id])->id] = how;
    free(use);
}

/* Records, for each tensor nest s writes, the dimension its split loop v advances along
 * (v < 0: s runs on the calling thread). Only the first store of each storage counts;
 * the entries of the storages s writes must be reset first (reset_written). */
static void record_written(const pctx *P, const kn_kprog *p, int *written, kn_ks *s, int v) {
    if (v < 0) {
        mark_written(p, written, s, WRITTEN_SERIAL);
        return;
    }
    dim_walk W = {
        .w = {.enter = dim_enter}, .P = P, .p = p, .written = written, .v = v, .record = true};
    kn_kwalk(&W.w, s);
}

static void reset_written(const kn_kprog *p, int *written, kn_ks *s) {
    mark_written(p, written, s, WRITTEN_UNKNOWN);
}

/* Whether nest s writes a kernel's private scratch buffer (a 1x1 convolution's packed
 * input): the nests after it in its kernel read that as they split, not as the producer
 * of s's input did. */
static bool writes_scratch(const kn_kprog *p, kn_ks *s) {
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use);
    kn_kernel_uses(s, use);
    bool hit = false;
    for (int id = 0; id < p->nbufs && !hit; id++)
        hit = (use[id] & 2) && p->bufs[id]->kind == KB_SCRATCH;
    free(use);
    return hit;
}

/* Whether nest o reads a per-thread scratch (kl_scratch_thread) that it does not write: the
 * values are in the copy of the thread that ran the code before it (the calling thread), and
 * a task on another thread would read its own copy instead. A convolution tile's partial
 * tile transposes from its scratch in such a nest (passes/tile.c conv_tile_per_thread): split
 * by a schedule file's `tasks`, the worker's tasks stored stale values (ctest
 * pointwise_llvm_t2, tests/pointwise/tasks4.sched: 2-8 of 30 runs wrong). */
static bool reads_thread_copy(const kn_kprog *p, kn_ks *o) {
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    KN_ASSERT(use);
    kn_kernel_uses(o, use);
    bool hit = false;
    for (int id = 0; id < p->nbufs && !hit; id++)
        hit = p->bufs[id]->per_thread && (use[id] & 1) && !(use[id] & 2);
    free(use);
    return hit;
}

/* Whether nest o stages a kernel's scratch in the pieces the kernel's own split reads:
 * its lowering marked its loop KN_LOOP_WHOLE (the stem's staged input, split by input
 * rows as the convolution after it is by output rows, passes/stem.c). Split, each
 * thread writes the rows it reads next, whatever thread wrote the nest's sources. */
static bool stages_for_split(const kn_kprog *p, kn_ks *o) {
    return (o->annot & KN_LOOP_WHOLE) && writes_scratch(p, o);
}

/* Whether nest o (outer loop o, one parallel loop `in` inside) reads its producers'
 * splits along in's dimension and not along o's (see above). */
static bool inner_like_producer(const pctx *P, const kn_kprog *p, int *written, kn_ks *o,
                                kn_ks *in) {
    dim_walk W = {.w = {.enter = dim_enter, .expr = dim_expr},
                  .P = P,
                  .p = p,
                  .written = written,
                  .v = o->var,
                  .in = in->var};
    kn_kwalk(&W.w, o);
    return W.inner_hit > 0 && W.outer_hit == 0;
}

/* How many bands band() makes of R rows: bands of at least MIN_BAND rows, at most
 * MAX_TASKS of them, whose first half (what the first of two threads runs) ends as near
 * the middle row as it can, where the producer's split between two threads fell too (a
 * split of 19 bands of 3 rows gave SqueezeNet's first MaxPool 10 bands, 30 of its 55
 * rows, on the first thread: 150 KB a run read across instead of 36 KB); ties go to
 * more bands (a slowed thread's tasks are taken over in smaller pieces). */
static int64_t band_count(int64_t R) {
    int64_t best = 2, err = -1;
    for (int64_t B = MIN_BAND; B <= R / 2; B++) {
        int64_t n = (R + B - 1) / B, first = (n + 1) / 2 * B;
        if (n > MAX_TASKS) continue;
        int64_t e = 2 * first > R ? 2 * first - R : R - 2 * first;
        if (err < 0 || e < err) {
            err = e;
            best = n;
        }
    }
    return best;
}

static void split(const pctx *P, int *written, kn_kprog *p, int k) {
    kn_kernel *kern = p->kernels[k];
    const kn_target *t = p->target;
    const kn_sched *ov = kn_schedule_for(p, k);
    kn_ks *nests[64];
    int n = outer_parallel(kern->body, nests, 0, 64);
    record_written(P, p, written, kern->body, -1); /* below: what split nests write */
    if (!n) return;
    if (t && t->kind == KN_TARGET_GPU) { /* the emitter maps a single nest to the NDRange */
        kern->sched.wg = ov && ov->wg
                             ? ov->wg
                             : workgroup(nests[0], t->workgroup_max > 0 ? t->workgroup_max : 1);
        return;
    }
    for (int i = 0; i < n; i++) {
        kn_ks *o = nests[i];
        int tasks = 1, split_var = o->var;
        if (!t || t->kind == KN_TARGET_CPU) {
            /* a nest shorter than a few wake-ups and joins of the pool runs on the caller */
            double e = effort(o) + const_bytes(o) / BYTES_PER_EFFORT;
            /* a nest that moves memory more than it computes (a padded copy, a Winograd
             * input transform): split coarsely by the bytes it writes */
            bool moves = e < MIN_SPLIT_EFFORT &&
                         effort(o) + stored_bytes(o) / BYTES_PER_EFFORT >= MIN_SPLIT_EFFORT &&
                         (sources_split(p, k, nests, i) || stages_for_split(p, o));
            /* a short nest over data the threads left spread over both cores (a Softmax,
             * LayerNorm or Slice after a split matrix product): on the caller alone it
             * would pull the worker's half across first; split, each core mostly reads
             * what it wrote. Only with SPREAD_TASK_EFFORT statements for each of two
             * tasks, along an outer loop of at least two iterations, and over data it
             * loads (see above) */
            bool spread = e < MIN_SPLIT_EFFORT && !moves && o->extent >= 2 &&
                          effort(o) >= 2 * SPREAD_TASK_EFFORT && loaded_bytes(o) > 0 &&
                          effort(o) + (stored_bytes(o) + loaded_bytes(o)) / BYTES_PER_EFFORT >=
                              MIN_SPREAD_EFFORT &&
                          sources_split(p, k, nests, i);
            double w = e < MIN_SPLIT_EFFORT && !moves && !spread ? 0 : cost(o) / MIN_TASK_WORK;
            if ((moves || spread) && w > MOVE_TASKS) w = MOVE_TASKS;
            if (spread && w < 2) w = 2;
            int64_t outer = o->extent;
            /* which loop a task takes consecutive iterations of when the two are
             * collapsed: the outer one, unless it runs over blocks of weights (the output
             * channel blocks of a convolution) and the inner one does not (pixel rows),
             * and the nest moves more bytes of tensors (stores, and the tensors it reads,
             * each counted once) than it reads of weights. Then each thread writes its
             * rows of every channel, the rows the kernels around it split by
             * (MobileNetV2's 112x112 expansion: 3 blocks x 196 rows of 64 pixels), and
             * reads all the weights; split by blocks it read half the weights and every
             * row of its input, half of which the other core wrote. The tensors read
             * count too: a projection whose weights outweigh its output (EfficientNet-B0's
             * 14x14 and 28x28 ones, 144-672 -> 40-112 channels; MobileNetV2's 14x14
             * 576 -> 96) reads every channel of its input and writes the rows that the
             * expansion after it, split by rows, reads; split by rows, EfficientNet-B0's
             * took 63-120 us of task CPU time at 2 threads against 75-130 us by blocks
             * (KILN_POOL_TRACE, docs/benchmarks.md "14x14 bands"). */
            kn_ks *in = o->body[0]->n == 1 ? o->body[0]->body[0] : NULL;
            kn_ks *cin = single_inner(o->body[0]); /* the loop collapse() would take */
            bool outer_major = w < 2 || o->extent >= COLLAPSE_BELOW || !cin ||
                               cin->kind != KS_FOR || !(cin->annot & KN_LOOP_PARALLEL) ||
                               const_bytes(o) >= stored_bytes(o) + data_bytes(o) ||
                               !indexes_weights(p, o, o->var) || indexes_weights(p, cin, cin->var);
            /* a nest without weights reading its input along the producer's split (see
             * "splitting like the producer"); one that writes a kernel's scratch (a padded
             * copy in rows, passes/tile.c conv_pad_rows) only in a program for several
             * threads, where its lowering made it for that (programs for one thread keep
             * their loop order) */
            bool like = w >= 2 && in && in->kind == KS_FOR && !in->ext &&
                        (in->annot & KN_LOOP_PARALLEL) && in->extent >= MIN_BAND_ROWS &&
                        stored_bytes(in) >= (double)BAND_ROW_BYTES * (double)in->extent &&
                        !(o->annot & KN_LOOP_WHOLE) && !const_bytes(o) &&
                        (p->threads > 1 || !writes_scratch(p, o)) &&
                        inner_like_producer(P, p, written, o, in);
            split_var = like ? in->var : o->var;
            if (like) {
                band(p, o, band_count(in->extent));
            } else if (w >= 2) { /* worth splitting: give the split enough iterations */
                while (o->extent < COLLAPSE_BELOW && collapse(p, o, outer_major)) {
                }
            }
            tasks = w < 2 ? 1 : w > MAX_TASKS ? MAX_TASKS : (int)w;
            /* a nest split in bands like its producer's rows in more than two tasks: one
             * task a band, so that the first thread's tasks are the bands that
             * band_count() ended near the producer's middle row (two tasks halve the
             * bands already). SqueezeNet's first MaxPool, vectorized by passes/pool.c,
             * in 7 tasks of 28 bands read 263 KB a run across the cores (KILN_XCORE=2),
             * in 28 tasks 36 KB; ResNet-18's layer2.0 conv1 padded copy in 16 tasks of 28
             * bands 364 KB, in 28 18 KB */
            if (like && tasks > 2) tasks = (int)o->extent;
            if (o->extent != outer && tasks > outer * COLLAPSED_TASKS)
                tasks = (int)(outer * COLLAPSED_TASKS);
            if (tasks > o->extent) tasks = (int)o->extent;
        }
        if (ov && ov->tasks) tasks = ov->tasks;
        if (tasks > 1 && reads_thread_copy(p, o)) tasks = 1; /* see reads_thread_copy */
        if (tasks > 1) { /* even chunks: no task gets a remainder much smaller than the rest */
            int64_t chunk = (o->extent + tasks - 1) / tasks;
            tasks = (int)((o->extent + chunk - 1) / chunk);
        }
        o->tasks = tasks;
        if (tasks > kern->sched.tasks) kern->sched.tasks = tasks;
        if (tasks > 1) {
            reset_written(p, written, o);
            record_written(P, p, written, o, split_var);
            int ro = kern->rows_out ? kn_kbuf_storage(kern->rows_out)->id : -1;
            if (ro >= 0 && (o->annot & KN_LOOP_WHOLE) && written[ro] == WRITTEN_UNKNOWN) {
                unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
                KN_ASSERT(use);
                kn_kernel_uses(o, use);
                if (use[kern->rows_out->id] & 2) written[ro] = 1; /* rows: see kn_kernel */
                free(use);
            }
        }
    }
}

kn_status kn_kpass_parallel(kn_ctx *cx, kn_kprog *p) {
    (void)cx;
    pctx P = {.p = p,
              .extent = malloc(((size_t)p->nvars + 1) * sizeof(int64_t)),
              .inside = calloc((size_t)p->nvars + 1, 1),
              .fixed = calloc((size_t)p->nvars + 1, 1),
              .let = calloc((size_t)p->nvars + 1, sizeof *P.let),
              .slot = malloc(((size_t)p->nvars + 1) * sizeof(int)),
              .nvars = p->nvars};
    unsigned char *set = calloc((size_t)p->nvars + 1, 1);
    KN_ASSERT(P.extent && P.inside && P.fixed && P.let && P.slot && set);
    for (int i = 0; i < p->nvars; i++) {
        P.extent[i] = -1;
        P.slot[i] = -1;
    }
    for (int k = 0; k < p->nkernels; k++) {
        kn_ks *body = p->kernels[k]->body, *outer[KN_MAX_RANK + 1];
        find_lets(&P, body, set);
        for (int i = 0; i < body->n; i++) mark(&P, body->body[i], outer, 0, 0);
    }
    int *written = malloc(((size_t)p->nbufs + 1) * sizeof *written);
    KN_ASSERT(written);
    for (int i = 0; i <= p->nbufs; i++) written[i] = WRITTEN_UNKNOWN;
    for (int k = 0; k < p->nkernels; k++) split(&P, written, p, k);
    free(written);
    free(P.extent);
    free(P.inside);
    free(P.fixed);
    free(P.let);
    free(P.slot);
    free(P.touched);
    free(set);
    return KN_OK;
}
