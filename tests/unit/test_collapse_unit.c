/* Few blocks of output channels split together with their tiles of pixels at several
 * threads. The models are MobileNetV2's 7x7 projections:
 *
 *   y = Relu(Conv1x1(x) + b)    x: 1x960x7x7, 160 channels out (5 blocks of 32, the tiles
 *                               7 pixels each), 600 KB of weights; or 320 channels out (5
 *                               blocks of 64, 8 tiles of 6 pixels and one of 1)
 *
 * whose 5 blocks gave 5 tasks, 3 on the first of two threads. With 160 channels the tiles'
 * loop sits in a loop of one iteration, which the parallel pass's collapse now sees through
 * (passes/parallel.c single_inner); with 320 the lowering makes the tiles and the partial
 * one a parallel loop inside the blocks (passes/tile.c conv_tiles_balance). Inputs and
 * weights are small integers (exact sums), y compared for equality with a plain-C
 * computation. Checked: at 2 threads the first parallel loop runs over blocks x tiles (35 or
 * 45 iterations) in more than 5 tasks; the JIT's y at 1 and 2 threads on kiln's pool (300
 * runs each), y cleared before each run.
 * usage: test_collapse_unit */
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

enum { C = 960, H = 7, W = 7, P = H * W, RUNS = 300 };

static int M; /* output channels of the case */

/* The first parallel loop at 2 threads: blocks x tiles of pixels, in more tasks than
 * blocks. */
static void check_plan(const kn_kprog *p, int threads) {
    CHECK(p->nkernels == 1);
    const kn_ks *o = p->nkernels == 1 ? jh_first_parallel(p->kernels[0]->body) : NULL;
    CHECK(o != NULL);
    int rows, kb;
    jh_tile(p, &rows, &kb);
    CHECK(rows > 0 && kb > 0 && M % kb == 0 && M / kb == 5);
    if (o && kb && rows && threads > 1)
        CHECK(o->extent == (int64_t)(M / kb) * ((P + rows - 1) / rows) && o->tasks > M / kb);
}

int main(void) {
    static const int ms[] = {160, 320};
    for (int i = 0; i < 2; i++) {
        M = ms[i];
        jh_conv1x1_relu_cases("proj", C, H, W, M, check_plan, RUNS);
    }
    return TEST_DONE();
}
