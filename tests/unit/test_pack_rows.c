/* A strided 1x1 convolution's input packing in rows of output pixels at several threads
 * (passes/tile.c pw_pack_strided): the loop over rows outermost and parallel, so each thread
 * packs the rows of the input that it wrote. The model built here is ResNet-50's layer2.0
 * downsample after a 1x1 convolution, smaller:
 *
 *   c = Relu(Conv1x1(x) + b1)             x: 1x64x56x56, 256 channels out (split by blocks
 *                                         of pixels: rows)
 *   y = Conv1x1(c) + b2, stride 2         64 channels out, 28x28 (784 pixels: 12 blocks of
 *                                         64 and a partial one)
 *
 * Inputs and weights are small integers, so every sum is exact and y is compared for
 * equality with a plain-C computation. Checked: at 1 thread the packing's outer loop runs
 * over the 256 input planes and is not split; at 2 its outer loop runs over the 28 rows of
 * output pixels, is parallel and split into more than one task; the JIT's y at 1 and 2
 * threads on kiln's pool (300 runs each), y cleared before each run.
 * usage: test_pack_rows */
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

enum { C = 64, H = 56, W = 56, K = 256, M = 64, OH = 28, OW = 28, RUNS = 300 };

static float x[C * H * W], w1[K * C], b1[K], w2[M * K], b2[M], mid[K * H * W];
static float want[M * OH * OW], got[M * OH * OW];

static void data(void) {
    for (int i = 0; i < C * H * W; i++) x[i] = (float)((i * 5 + i / 7) % 5 - 2);
    for (int i = 0; i < K * C; i++) w1[i] = (float)((i * 7 + i / 13) % 3 - 1);
    for (int i = 0; i < K; i++) b1[i] = (float)(i % 5 - 2);
    for (int i = 0; i < M * K; i++) w2[i] = (float)((i * 3 + i / 11) % 3 - 1);
    for (int i = 0; i < M; i++) b2[i] = (float)(i % 7 - 3);
    for (int k = 0; k < K; k++)
        for (int p = 0; p < H * W; p++) {
            long s = (long)b1[k];
            for (int c = 0; c < C; c++) s += (long)w1[k * C + c] * (long)x[c * H * W + p];
            mid[k * H * W + p] = s > 0 ? (float)s : 0.0f;
        }
    for (int m = 0; m < M; m++)
        for (int oy = 0; oy < OH; oy++)
            for (int ox = 0; ox < OW; ox++) {
                long s = (long)b2[m];
                for (int k = 0; k < K; k++)
                    s += (long)w2[m * K + k] * (long)mid[(k * H + oy * 2) * W + ox * 2];
                want[(m * OH + oy) * OW + ox] = (float)s;
            }
}

static void build(model *md) {
    static int64_t dx[] = {1, C, H, W}, dw1[] = {K, C, 1, 1}, dw2[] = {M, K, 1, 1};
    static int64_t db1[] = {K}, db2[] = {M}, s[] = {2, 2};
    static char *in1[] = {"x", "w1", "b1"}, *o1[] = {"c1"}, *o2[] = {"c"};
    static char *in2[] = {"c", "w2", "b2"}, *out[] = {"y"};
    model_init(md, 13);
    add_input(md, "x", 4, dx);
    add_init(md, "w1", 4, dw1, w1, K * C);
    add_init(md, "b1", 1, db1, b1, K);
    add_init(md, "w2", 4, dw2, w2, M * K);
    add_init(md, "b2", 1, db2, b2, M);
    add_node(md, "Conv", "conv1", 3, in1, 1, o1);
    add_node(md, "Relu", "relu", 1, o1, 1, o2);
    Onnx__NodeProto *n = add_node(md, "Conv", "down", 3, in2, 1, out);
    add_ints(md, n, "strides", 2, s);
    add_output(md, "y");
}

typedef struct seen {
    kn_kwalker w;
    const kn_kbuf *x; /* the downsample's input */
    bool reads;       /* a load of x */
} seen;

static void see_expr(kn_kwalker *w, kn_kx *e) {
    seen *S = (seen *)w;
    if (e->op == KX_LOAD && kn_kbuf_storage(e->buf) == S->x) S->reads = true;
}

/* The packing is the one nest of the downsample that reads its input (the tiles read the
 * packed scratch). */
static void check_plan(const kn_kprog *p, int threads) {
    CHECK(p->nkernels == 2);
    if (p->nkernels != 2) return;
    const kn_kernel *k = p->kernels[1];
    CHECK(k->contract != NULL);
    if (!k->contract) return;
    const kn_ks *pack = NULL;
    int readers = 0;
    for (int i = 0; i < k->body->n; i++) {
        seen S = {.w = {.expr = see_expr}, .x = kn_kbuf_storage(k->contract->x)};
        kn_kwalk(&S.w, k->body->body[i]);
        if (S.reads) readers++, pack = jh_outer_loop(k->body->body[i]);
    }
    CHECK(readers == 1 && pack && pack->kind == KS_FOR);
    if (readers != 1 || !pack || pack->kind != KS_FOR) return;
    if (threads == 1) {
        CHECK(pack->extent == K && pack->tasks <= 1);
        return;
    }
    CHECK(pack->extent == OH && (pack->annot & KN_LOOP_PARALLEL) && pack->tasks > 1);
}

static int differs(void) {
    return memcmp(got, want, sizeof got) != 0;
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
