/* A program in a unit test run through the JIT on a number of threads (kiln's pool when
 * more than one), many times, each run's outputs checked by the test. */
#ifndef KN_JIT_HARNESS_H
#define KN_JIT_HARNESS_H

#include "codegen/llvm/llvm.h"
#include "onnx_builder.h"
#include "test.h"
#include "ir/kir.h"
#include "passes/pass.h"
#include "runtime/kn_pool.h"
#include "targets/target.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compiles p for the host and runs it `runs` times on `threads` threads with inputs in and
 * outputs out (nout of them, out_bytes[i] bytes each, zeroed before every run); returns how
 * many runs failed or were called wrong by wrong() (-1: not compiled). */
static inline int jh_runs(kn_ctx *cx, const kn_kprog *p, int threads, const void *const *in,
                          void *const *out, const size_t *out_bytes, int nout, int runs,
                          int (*wrong)(void)) {
    kn_jit *j = NULL;
    kn_pool *pool = threads > 1 ? kn_pool_create(threads) : NULL;
    if (kn_llvm_jit(cx, p, kn_target_find("native"), 2, pool ? kn_pool_par_for : NULL, &j) !=
        KN_OK) {
        kn_pool_destroy(pool);
        return -1;
    }
    void *arena = aligned_alloc(KN_ARENA_ALIGN, (p->arena_size + 63) / 64 * 64 + 64);
    KN_ASSERT(arena);
    kn_entry_fn fn = kn_jit_entry(j);
    int bad = 0;
    kn_pool_run_begin(pool);
    for (int r = 0; r < runs; r++) {
        for (int i = 0; i < nout; i++) memset(out[i], 0, out_bytes[i]);
        bad += fn(in, out, NULL, arena) != 0 || wrong();
    }
    kn_pool_run_end();
    free(arena);
    kn_jit_destroy(j);
    kn_pool_destroy(pool);
    return bad;
}

/* Compiles graph g for `threads` threads on the native target, with schedule file sched
 * (NULL: the passes' own); NULL where it fails (the diagnostic in cx). */
static inline kn_kprog *jh_compile(kn_ctx *cx, kn_graph *g, int threads, const char *sched) {
    kn_kprog *p = NULL;
    kn_compile_opts opts = {.threads = threads, .schedule_file = sched};
    if (kn_compile_program_opts(cx, g, "m", kn_target_find("native"), &opts, &p) != KN_OK)
        return NULL;
    return p;
}

/* A unit test's program: its model loaded (cx, g) and compiled (p). */
typedef struct jh_prog {
    kn_ctx cx;
    kn_graph *g;
    kn_kprog *p;
} jh_prog;

/* Builds the test's model with build, loads it and compiles it for `threads` threads on
 * the native target with schedule file sched (NULL: the passes' own) into j; both steps
 * CHECKed. False where either failed (j released). */
static inline bool jh_build(void (*build)(model *), int threads, const char *sched, jh_prog *j) {
    model md;
    build(&md);
    j->g = NULL, j->p = NULL;
    CHECK(load(&md, &j->cx, &j->g, 0) == KN_OK);
    if (j->g) j->p = jh_compile(&j->cx, j->g, threads, sched);
    CHECK(j->p != NULL);
    if (!j->p && j->g) kn_graph_destroy(j->g);
    return j->p != NULL;
}

static inline void jh_release(jh_prog *j) {
    kn_kprog_destroy(j->p);
    kn_graph_destroy(j->g);
}

/* jh_runs of a program of one input x and one output y (ybytes): how many runs were wrong,
 * printed where there were any. */
static inline int jh_runs1(kn_ctx *cx, const kn_kprog *p, int threads, const void *x, void *y,
                           size_t ybytes, int runs, int (*wrong)(void)) {
    const void *in[1] = {x};
    void *out[1] = {y};
    int bad = jh_runs(cx, p, threads, in, out, &ybytes, 1, runs, wrong);
    if (bad) printf("jit, %d threads: %d of %d runs wrong\n", threads, bad, runs);
    return bad;
}

/* One case of a test of a program with one input x and one output y (ybytes): build's
 * model compiled for `threads` threads (schedule file sched, or NULL), check(p, threads)
 * on the program (NULL: none), then `runs` runs through the JIT, CHECKed that wrong()
 * finds none wrong. */
static inline void jh_case1(void (*build)(model *), int threads, const char *sched,
                            void (*check)(const kn_kprog *, int), const void *x, void *y,
                            size_t ybytes, int runs, int (*wrong)(void)) {
    jh_prog j;
    if (!jh_build(build, threads, sched, &j)) return;
    if (check) check(j.p, threads);
    CHECK(jh_runs1(&j.cx, j.p, threads, x, y, ybytes, runs, wrong) == 0);
    jh_release(&j);
}

/* The reference of y = Relu(Conv1x1(x) + b) over small integers (exact sums): x[C][P],
 * w[M][C], b[M], y[M][P]. */
static inline void jh_conv1x1_relu(const float *x, const float *w, const float *b, float *y, int c,
                                   int p, int m) {
    for (int o = 0; o < m; o++)
        for (int q = 0; q < p; q++) {
            long s = (long)b[o];
            for (int i = 0; i < c; i++) s += (long)w[o * c + i] * (long)x[i * p + q];
            y[o * p + q] = s > 0 ? (float)s : 0.0f;
        }
}

/* The reference of y = Conv3x3(x) + b with stride s and padding 1, Relu'd where relu says,
 * over small integers (exact sums): x[c][h][wd], w[m][c][3][3], b[m], y[m][oh][ow] with
 * oh = (h - 1) / s + 1 and ow = (wd - 1) / s + 1. */
static inline void jh_conv3x3(const float *x, const float *w, const float *b, float *y, int c,
                              int h, int wd, int m, int s, bool relu) {
    int oh = (h - 1) / s + 1, ow = (wd - 1) / s + 1;
    for (int o = 0; o < m; o++)
        for (int oy = 0; oy < oh; oy++)
            for (int ox = 0; ox < ow; ox++) {
                long sum = (long)b[o];
                for (int i = 0; i < c; i++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int iy = oy * s - 1 + ky, ix = ox * s - 1 + kx;
                            if (iy >= 0 && iy < h && ix >= 0 && ix < wd)
                                sum += (long)w[((o * c + i) * 3 + ky) * 3 + kx] *
                                       (long)x[(i * h + iy) * wd + ix];
                        }
                y[(o * oh + oy) * ow + ox] = relu && sum < 0 ? 0.0f : (float)sum;
            }
}

/* A 3x3 Conv node of md with padding 1 and stride s (1 or 2; the strides attribute only
 * for 2), in = {x, w, b}: jh_conv3x3's convolution. */
static inline void jh_conv3x3_node(model *md, const char *name, char **in, char **out, int s) {
    static int64_t k[] = {3, 3}, s2[] = {2, 2}, pads[] = {1, 1, 1, 1};
    Onnx__NodeProto *n = add_node(md, "Conv", name, 3, in, 1, out);
    add_ints(md, n, "kernel_shape", 2, k);
    if (s == 2) add_ints(md, n, "strides", 2, s2);
    add_ints(md, n, "pads", 4, pads);
}

/* Small integers in x [c][h][wd], w [m][c][3][3] and b [m] (exact sums), and y =
 * jh_conv3x3 with stride 2, no Relu. */
static inline void jh_conv3x3_s2_data(float *x, float *w, float *b, float *y, int c, int h, int wd,
                                      int m) {
    for (int i = 0; i < c * h * wd; i++) x[i] = (float)((i * 5 + i / 7) % 5 - 2);
    for (int i = 0; i < m * c * 9; i++) w[i] = (float)((i * 3 + i / 11) % 3 - 1);
    for (int i = 0; i < m; i++) b[i] = (float)(i % 7 - 3);
    jh_conv3x3(x, w, b, y, c, h, wd, m, 2, false);
}

/* md: y = Conv3x3(x, w) + b, stride 2, padding 1 (jh_conv3x3_node "conv"), x [1][c][h][wd]
 * an input, w [m][c][3][3] and b [m] initializers (kept by pointer until md is built). */
static inline void jh_conv3x3_s2_model(model *md, int c, int h, int wd, int m, float *w, float *b) {
    static int64_t dx[4], dw[4], db[1];
    static char *in[] = {"x", "w", "b"}, *out[] = {"y"};
    dx[0] = 1, dx[1] = c, dx[2] = h, dx[3] = wd;
    dw[0] = m, dw[1] = c, dw[2] = dw[3] = 3;
    db[0] = m;
    model_init(md, 13);
    add_input(md, "x", 4, dx);
    add_init(md, "w", 4, dw, w, (size_t)m * c * 9);
    add_init(md, "b", 1, db, b, (size_t)m);
    jh_conv3x3_node(md, "conv", in, out, 2);
    add_output(md, "y");
}

/* Small integers in x [c][p], w [m][c] and b [m] (exact sums), and y = jh_conv1x1_relu. */
static inline void jh_conv1x1_relu_data(float *x, float *w, float *b, float *y, int c, int p,
                                        int m) {
    for (int i = 0; i < c * p; i++) x[i] = (float)((i * 5 + i / 7) % 5 - 2);
    for (int i = 0; i < m * c; i++) w[i] = (float)((i * 7 + i / 13) % 3 - 1);
    for (int o = 0; o < m; o++) b[o] = (float)(o % 9 - 4);
    jh_conv1x1_relu(x, w, b, y, c, p, m);
}

/* The model jh_conv1x1_relu computes: x [1][c][h][wd] in, the initializers w [m][c][1][1]
 * and b [m], a Conv named conv, its Relu, y out. The model borrows the shapes, kept here
 * in static storage: one such model at a time. */
static inline void jh_conv1x1_relu_model(model *md, const char *conv, int c, int h, int wd, int m,
                                         float *w, float *b) {
    static int64_t dx[4], dw[4], db[1];
    dx[0] = 1, dx[1] = c, dx[2] = h, dx[3] = wd;
    dw[0] = m, dw[1] = c, dw[2] = dw[3] = 1;
    db[0] = m;
    static char *in[] = {"x", "w", "b"}, *mid[] = {"c"}, *out[] = {"y"};
    model_init(md, 13);
    add_input(md, "x", 4, dx);
    add_init(md, "w", 4, dw, w, (size_t)m * c);
    add_init(md, "b", 1, db, b, (size_t)m);
    add_node(md, "Conv", conv, 3, in, 1, mid);
    add_node(md, "Relu", "relu", 1, mid, 1, out);
    add_output(md, "y");
}

/* The state of jh_conv1x1_relu_cases' callbacks (one case at a time). */
typedef struct jh_cv {
    const char *conv;
    int c, h, wd, m;
    float *x, *w, *b, *want, *got;
} jh_cv;

static inline jh_cv *jh_cv_now(void) {
    static jh_cv cv;
    return &cv;
}

static inline void jh_cv_build(model *md) {
    jh_cv *v = jh_cv_now();
    jh_conv1x1_relu_model(md, v->conv, v->c, v->h, v->wd, v->m, v->w, v->b);
}

static inline int jh_cv_differs(void) {
    jh_cv *v = jh_cv_now();
    return memcmp(v->got, v->want, (size_t)v->m * v->h * v->wd * sizeof *v->got) != 0;
}

/* y = Relu(Conv1x1(x) + b) with jh_conv1x1_relu_data's values, the model of
 * jh_conv1x1_relu_model (its Conv named conv; x 1 x c x h x wd, m channels out), compiled
 * and run at 1 and at 2 threads: check(p, threads) on each program, then `runs` runs
 * through the JIT, y compared for equality with the plain-C reference. */
static inline void jh_conv1x1_relu_cases(const char *conv, int c, int h, int wd, int m,
                                         void (*check)(const kn_kprog *, int), int runs) {
    jh_cv *v = jh_cv_now();
    size_t p = (size_t)h * wd;
    *v = (jh_cv){conv,
                 c,
                 h,
                 wd,
                 m,
                 malloc(sizeof(float) * c * p),
                 malloc(sizeof(float) * m * c),
                 malloc(sizeof(float) * m),
                 malloc(sizeof(float) * m * p),
                 malloc(sizeof(float) * m * p)};
    CHECK(v->x && v->w && v->b && v->want && v->got);
    if (v->x && v->w && v->b && v->want && v->got) {
        jh_conv1x1_relu_data(v->x, v->w, v->b, v->want, c, (int)p, m);
        for (int threads = 1; threads <= 2; threads++)
            jh_case1(jh_cv_build, threads, NULL, check, v->x, v->got, sizeof(float) * m * p, runs,
                     jh_cv_differs);
    }
    free(v->x), free(v->w), free(v->b), free(v->want), free(v->got);
}

/* The register tile of kernel 0's schedule: its rows and its columns (vectors x lanes). */
static inline void jh_tile(const kn_kprog *p, int *rows, int *cols) {
    const kn_sched *sc = &p->kernels[0]->sched;
    *rows = sc->tile_rows, *cols = sc->tile_vecs * sc->lanes;
}

/* The outermost loop of top-level statement s below loops of one iteration. */
static inline const kn_ks *jh_outer_loop(const kn_ks *s) {
    while (s->kind == KS_FOR && s->extent == 1 && s->body[0]->n == 1) s = s->body[0]->body[0];
    return s;
}

/* The first loop marked parallel in block blk, depth first, or NULL. */
static inline const kn_ks *jh_first_parallel(const kn_ks *blk) {
    for (int i = 0; i < blk->n; i++) {
        const kn_ks *s = blk->body[i];
        if (s->kind != KS_FOR) continue;
        if (s->annot & KN_LOOP_PARALLEL) return s;
        const kn_ks *in = jh_first_parallel(s->body[0]);
        if (in) return in;
    }
    return NULL;
}

#endif
