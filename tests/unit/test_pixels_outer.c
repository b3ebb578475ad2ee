/* Convolution tiles of pixels outermost at several threads (passes/tile.c conv_pixels_outer
 * and conv_pixel_groups): a 1x1 convolution of one row of pixels with few blocks of output
 * channels is split by its tiles of pixels, every block inside, instead of by its blocks.
 * The model is ResNet-50's layer3 conv1:
 *
 *   y = Relu(Conv1x1(x) + b)    x: 1x1024x14x14 (196 pixels: 32 tiles of 6 and one of 4),
 *                               256 channels out (4 blocks of 64), 1 MB of weights
 *
 * and the same with 200 channels out, whose last block of channels is partial (a first
 * version computed it at block 0). With 512 channels out (layer4.0 conv1: 2 MB of weights,
 * more than half of L2 on the machines measured) the tiles go in one group a thread
 * (conv_pixel_groups), each group's tiles inside every block; also on 10x20 pixels (33
 * tiles of 6 and one of 2: a whole tile left over after two groups of 16) with 328 channels
 * out (5 full blocks and a partial one; 1.3 MB of weights).
 *
 * Inputs and weights are small integers (exact sums), y compared for equality with a
 * plain-C computation. Checked: at 1 thread the kernel's parallel loop runs over the full
 * blocks; at 2 over the whole tiles of pixels, split into more tasks than there are blocks
 * (pixels outer), or over 2 groups of tiles in 2 tasks, split as it stands (groups); the
 * JIT's y at 1 and 2 threads on kiln's pool (300 runs each), y cleared before each run.
 * usage: test_pixels_outer */
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "targets/target.h"
#include "test.h"

enum { C = 1024, RUNS = 300 };

static int M, P; /* the case: output channels, pixels */

/* The first parallel loop: the full blocks at 1 thread; at 2 the whole tiles of pixels, or
 * one group of them a thread where the weights are more than half of L2. */
static void check_plan(const kn_kprog *p, int threads) {
    CHECK(p->nkernels == 1);
    const kn_ks *o = p->nkernels == 1 ? jh_first_parallel(p->kernels[0]->body) : NULL;
    CHECK(o != NULL);
    /* the register tile: rows of pixels, blocks of kb channels */
    int rows, kb;
    jh_tile(p, &rows, &kb);
    CHECK(rows > 0 && kb > 0);
    if (M % 64) CHECK(kb > 0 && M % kb != 0); /* the case of a partial block */
    bool groups = (int64_t)M * C * 4 >
                  kn_target_l2(kn_target_resolve(kn_target_find("native")), 512 * 1024) / 2;
    if (o && kb && threads == 1) CHECK(o->extent == M / kb);
    if (o && kb && rows && threads > 1 && !groups)
        CHECK(o->extent == P / rows && o->tasks > M / kb);
    if (o && threads > 1 && groups)
        CHECK(o->extent == threads && o->tasks == threads && (o->annot & KN_LOOP_WHOLE));
}

int main(void) {
    static const int cases[][3] = {{256, 14, 14}, {200, 14, 14}, {512, 14, 14}, {328, 10, 20}};
    for (int i = 0; i < 4; i++) {
        M = cases[i][0], P = cases[i][1] * cases[i][2];
        jh_conv1x1_relu_cases("conv1", C, cases[i][1], cases[i][2], M, check_plan, RUNS);
    }
    return TEST_DONE();
}
