/* A padded convolution's input copy in rows at several threads (passes/tile.c conv_pad_rows),
 * split in bands like the rows of the kernel that wrote it (passes/parallel.c, "splitting like
 * the producer"). The model built here is ResNet-50's layer2.0 conv1 and conv2, smaller:
 *
 *   c = Relu(Conv1x1(x) + b1)             x: 1x64x56x56, 128 channels out (split by blocks
 *                                         of pixels: rows)
 *   y = Conv3x3(c) + b2, stride 2, pad 1  128 channels out, 28x28
 *
 * Inputs and weights are small integers, so every sum is exact and y is compared for
 * equality with a plain-C computation. Checked: at 1 thread the 3x3 kernel fills its padded
 * copy with one loop over every element, as before; at 2 no nest of it stores to every
 * element, and the nest that copies the input rows is split into more than one task along a
 * loop that is not the one over channels (its bands of rows); the JIT's y at 1 and 2 threads
 * on kiln's pool (300 runs each), y cleared before each run, so a row or a pad element left
 * out shows.
 * usage: test_pad_rows */
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

enum { C = 64, H = 56, W = 56, M = 128, OH = 28, OW = 28, RUNS = 300 };

static float x[C * H * W], w1[M * C], b1[M], w2[M * M * 9], b2[M], mid[M * H * W];
static float want[M * OH * OW], got[M * OH * OW];

static void data(void) {
    for (int i = 0; i < C * H * W; i++) x[i] = (float)((i * 5 + i / 7) % 5 - 2);
    for (int i = 0; i < M * C; i++) w1[i] = (float)((i * 7 + i / 13) % 3 - 1);
    for (int i = 0; i < M; i++) b1[i] = (float)(i % 5 - 2), b2[i] = (float)(i % 7 - 3);
    for (int i = 0; i < M * M * 9; i++) w2[i] = (float)((i * 3 + i / 11) % 3 - 1);
    jh_conv1x1_relu(x, w1, b1, mid, C, H * W, M);
    jh_conv3x3(mid, w2, b2, want, M, H, W, M, 2, false);
}

static void build(model *md) {
    static int64_t dx[] = {1, C, H, W}, dw1[] = {M, C, 1, 1}, dw2[] = {M, M, 3, 3}, db[] = {M};
    static char *in1[] = {"x", "w1", "b1"}, *o1[] = {"c1"}, *o2[] = {"c"};
    static char *in2[] = {"c", "w2", "b2"}, *out[] = {"y"};
    model_init(md, 13);
    add_input(md, "x", 4, dx);
    add_init(md, "w1", 4, dw1, w1, M * C);
    add_init(md, "b1", 1, db, b1, M);
    add_init(md, "w2", 4, dw2, w2, M * M * 9);
    add_init(md, "b2", 1, db, b2, M);
    add_node(md, "Conv", "conv1", 3, in1, 1, o1);
    add_node(md, "Relu", "relu", 1, o1, 1, o2);
    jh_conv3x3_node(md, "conv2", in2, out, 2);
    add_output(md, "y");
}

typedef struct seen {
    kn_kwalker w;
    int64_t numel; /* of the padded copy */
    bool copy;     /* a copy into it */
} seen;

static kn_kbuf *pad_buf; /* the 3x3 kernel's padded copy: the scratch its copy writes */

static bool see_enter(kn_kwalker *w, kn_ks *s) {
    seen *S = (seen *)w;
    if (s->kind == KS_COPY && s->buf->kind == KB_SCRATCH) S->copy = true, pad_buf = s->buf;
    return true;
}

/* Whether nest s is a loop over every element of b storing to it (the whole-buffer fill). */
static bool fills(const kn_ks *s, const kn_kbuf *b) {
    s = jh_outer_loop(s);
    return s->kind == KS_FOR && s->extent == b->numel && s->body[0]->n == 1 &&
           s->body[0]->body[0]->kind == KS_STORE && s->body[0]->body[0]->buf == b;
}

static void check_plan(const kn_kprog *p, int threads) {
    CHECK(p->nkernels == 2);
    if (p->nkernels != 2) return;
    const kn_ks *body = p->kernels[1]->body;
    const kn_ks *copy_nest = NULL;
    pad_buf = NULL;
    for (int i = 0; i < body->n; i++) {
        seen S = {.w = {.enter = see_enter}};
        kn_kwalk(&S.w, body->body[i]);
        if (S.copy && !copy_nest) copy_nest = jh_outer_loop(body->body[i]);
    }
    CHECK(copy_nest && pad_buf);
    if (!copy_nest || !pad_buf) return;
    int fill = 0;
    for (int i = 0; i < body->n; i++) fill += fills(body->body[i], pad_buf);
    if (threads == 1) {
        CHECK(fill == 1);
        return;
    }
    CHECK(fill == 0);
    CHECK(copy_nest->kind == KS_FOR && (copy_nest->annot & KN_LOOP_PARALLEL));
    CHECK(copy_nest->tasks > 1);
    CHECK(copy_nest->extent != M); /* bands of rows, not the channels */
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
