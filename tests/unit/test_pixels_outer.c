/* How a 1x1 convolution of one row of pixels with few blocks of output channels is split at
 * several threads (passes/tile.c conv_split_blocks): where its tiles read x ahead (pw_xpf: x
 * of PW_XPF_BYTES, 384 KB, or more) by its blocks of output channels, as at one thread
 * (conv_blocks_read_ahead); otherwise by its tiles of pixels, every block inside
 * (conv_pixels_outer), or in one group of tiles a thread where the weights are more than half
 * of L2 (conv_pixel_groups). The models:
 *
 *   y = Relu(Conv1x1(x) + b)    x: 1x1024x14x14 (196 pixels: 32 tiles of 6 and one of 4),
 *                               256 channels out (4 blocks of 64): ResNet-50's layer3 conv1
 *
 * and the same with 200 channels out (a partial block of channels; a first version of the
 * pixel tiles computed it at block 0), 512 out (layer4.0 conv1, 2 MB of weights), and 328
 * out on 10x20 pixels (5 full blocks and a partial one): all read x ahead (784-800 KB).
 * Below 384 KB of x: 320 -> 256 on 14x14 (250 KB; tiles of pixels outermost) and 640 -> 448
 * on 12x12 (360 KB; 1.1 MB of weights: groups on a CPU whose L2 is 2.2 MB or less).
 *
 * Inputs and weights are small integers (exact sums), y compared for equality with a
 * plain-C computation. Checked: at 1 thread the kernel's parallel loop runs over the full
 * blocks; at 2 over the full blocks too where x is read ahead (the schedule's xpf set; with
 * no partial tile of pixels, the parallel pass collapses them with their tiles), else
 * over the whole tiles of pixels, split into more tasks than there are blocks (pixels outer),
 * or over 2 groups of tiles in 2 tasks, split as it stands (groups); the JIT's y at 1 and 2
 * threads on kiln's pool (300 runs each), y cleared before each run.
 * usage: test_pixels_outer */
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "targets/target.h"
#include "test.h"

enum { RUNS = 300, XPF_BYTES = 384 * 1024 };

static int C, M, P; /* the case: input and output channels, pixels */

/* The first parallel loop: the full blocks at 1 thread; at 2 the full blocks where x is read
 * ahead, else the whole tiles of pixels, or one group of them a thread where the weights are
 * more than half of L2. */
static void check_plan(const kn_kprog *p, int threads) {
    CHECK(p->nkernels == 1);
    const kn_ks *o = p->nkernels == 1 ? jh_first_parallel(p->kernels[0]->body) : NULL;
    CHECK(o != NULL);
    /* the register tile: rows of pixels, blocks of kb channels */
    int rows, kb;
    jh_tile(p, &rows, &kb);
    CHECK(rows > 0 && kb > 0);
    if (M % 64) CHECK(kb > 0 && M % kb != 0); /* the case of a partial block */
    bool ahead = (int64_t)C * P * 4 >= XPF_BYTES;
    bool groups =
        !ahead && (int64_t)M * C * 4 >
                      kn_target_l2(kn_target_resolve(kn_target_find("native")), 512 * 1024) / 2;
    CHECK(ahead == (p->nkernels == 1 && p->kernels[0]->sched.xpf > 0));
    if (o && kb && threads == 1) CHECK(o->extent == M / kb);
    /* the blocks, or (no partial tile of pixels) the blocks collapsed with the tiles inside */
    if (o && kb && rows && threads > 1 && ahead)
        CHECK(o->extent == M / kb || o->extent == (int64_t)(M / kb) * (P / rows));
    if (o && kb && rows && threads > 1 && !ahead && !groups)
        CHECK(o->extent == P / rows && o->tasks > M / kb);
    if (o && threads > 1 && groups)
        CHECK(o->extent == threads && o->tasks == threads && (o->annot & KN_LOOP_WHOLE));
}

int main(void) {
    static const int cases[][4] = {{1024, 256, 14, 14}, {1024, 200, 14, 14}, {1024, 512, 14, 14},
                                   {1024, 328, 10, 20}, {320, 256, 14, 14},  {640, 448, 12, 12}};
    for (int i = 0; i < 6; i++) {
        C = cases[i][0], M = cases[i][1], P = cases[i][2] * cases[i][3];
        jh_conv1x1_relu_cases("conv1", C, cases[i][2], cases[i][3], M, check_plan, RUNS);
    }
    return TEST_DONE();
}
