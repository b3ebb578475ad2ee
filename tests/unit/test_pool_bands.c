/* A float MaxPool with padding above built in bands of rows at several threads (passes/pool.c
 * pool_bands): the band loop outermost, split as it stands, the top border rows in the first
 * band and the bottom ones in the last. The model built here is ResNet's pool, smaller:
 *
 *   y = MaxPool(x), 3x3, stride 2, pads 1     x: 1x96x80x81, y: 1x96x40x41 (39 interior rows:
 *                                             an odd count, so the last band is partial;
 *                                             81 columns: a right border column too)
 *
 * Checked: at 1 thread the pool's nest is split by channels as before (no band loop); at 2
 * its outermost loop is parallel, marked KN_LOOP_WHOLE and split into more than one task;
 * the JIT's output at 1 and 2 threads on kiln's pool (1000 runs each) equals a plain-C max
 * pool's (the max is exact: the same values in any order). x's values change from element
 * to element, both signs, and y is cleared before each run, so a row or channel left
 * out, or a window shifted, shows. 96 channels: with the interior's strided vectors (passes/
 * pool.c) 32 channels were too little work for the parallel pass to split at all.
 * usage: test_pool_bands */
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { C = 96, H = 80, W = 81, OH = 40, OW = 41, RUNS = 1000 };

static float x[C * H * W], want[C * OH * OW], got[C * OH * OW];

static void data(void) {
    for (int i = 0; i < C * H * W; i++) x[i] = (float)((i * 37) % 100003) - 600.0f;
    for (int c = 0; c < C; c++)
        for (int oy = 0; oy < OH; oy++)
            for (int ox = 0; ox < OW; ox++) {
                float m = -INFINITY;
                for (int ky = 0; ky < 3; ky++)
                    for (int kx = 0; kx < 3; kx++) {
                        int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
                        if (iy >= 0 && iy < H && ix >= 0 && ix < W && x[(c * H + iy) * W + ix] > m)
                            m = x[(c * H + iy) * W + ix];
                    }
                want[(c * OH + oy) * OW + ox] = m;
            }
}

static void build(model *md) {
    static int64_t dx[] = {1, C, H, W}, k[] = {3, 3}, s[] = {2, 2}, pads[] = {1, 1, 1, 1};
    static char *in[] = {"x"}, *out[] = {"y"};
    model_init(md, 13);
    add_input(md, "x", 4, dx);
    Onnx__NodeProto *n = add_node(md, "MaxPool", "pool", 1, in, 1, out);
    add_ints(md, n, "kernel_shape", 2, k);
    add_ints(md, n, "strides", 2, s);
    add_ints(md, n, "pads", 4, pads);
    add_output(md, "y");
}

/* The kernel's first statement under loops of one iteration. */
static const kn_ks *first_loop(const kn_kprog *p) {
    const kn_ks *s = p->kernels[0]->body->body[0];
    while (s->kind == KS_FOR && s->extent == 1 && s->body[0]->n == 1) s = s->body[0]->body[0];
    return s;
}

static int differs(void) {
    return memcmp(got, want, sizeof got) != 0;
}

/* The pool's outer loop: bands of rows split at 2 threads, its channels at 1. */
static void check_plan(const kn_kprog *p, int threads) {
    CHECK(p->nkernels == 1);
    const kn_ks *o = first_loop(p);
    CHECK(o->kind == KS_FOR);
    bool whole = (o->annot & KN_LOOP_WHOLE) != 0;
    CHECK(threads > 1 ? whole && (o->annot & KN_LOOP_PARALLEL) && o->tasks > 1 : !whole);
    CHECK(threads > 1 || o->extent == C);
}

static void run_case(int threads) {
    jh_case1(build, threads, NULL, check_plan, x, got, sizeof got, RUNS, differs);
}

int main(void) {
    data();
    run_case(1);
    run_case(2);
    return TEST_DONE();
}
