/* Convolution tiles split by pixels (passes/tile.c conv_tile_per_thread): the float tiles of
 * tile_conv store each register tile into a scratch and transpose it into y from there. With
 * one slot per block of output channels shared by all the block's tiles of pixels, a
 * convolution of one block of channels (SqueezeNet's 13x13 squeezes) ran on one task; in a
 * program for several threads the scratch is per-thread (kl_scratch_thread) and the loop
 * over tiles of pixels is split. The model built here is SqueezeNet 1.1's last squeeze:
 *
 *   y = Relu(Conv1x1(x) + b)    x: 1x512x13x13, 64 channels out (one block of 6 x 4 or
 *                               8 x 4 tiles of 16 lanes)
 *
 * The inputs and weights are small integers, so every sum is exact and the output is
 * compared for equality with a plain-C convolution. Pixel values differ from tile to tile:
 * a thread whose scratch the other overwrote between a tile's store and its transposing
 * read would put another tile's pixels into y. Checked: at 1 thread no per-thread scratch
 * and one task; at 2 a per-thread scratch of 2 copies and more than one task; the JIT at 1
 * and 2 threads on kiln's pool (1000 runs each); the generated C of the 2-thread program
 * (copy 0), compiled with $CC (or cc) and run.
 * usage: test_conv_tile_tasks TMPDIR */
#include "c_harness.h"
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

enum { C = 512, H = 13, W = 13, M = 64, P = H * W, RUNS = 1000 };

static float x[C * P], w[M * C], b[M], want[M * P], got[M * P];

static void data(void) {
    for (int c = 0; c < C; c++)
        for (int p = 0; p < P; p++) x[c * P + p] = (float)((c * 5 + p * 3 + p / 6) % 7 - 3);
    for (int i = 0; i < M * C; i++) w[i] = (float)((i * 7 + i / 13) % 5 - 2);
    for (int m = 0; m < M; m++) b[m] = (float)(m % 9 - 4);
    jh_conv1x1_relu(x, w, b, want, C, P, M);
}

/* The model (jh_build loads it and compiles it for a number of threads). */
static void build(model *md) {
    jh_conv1x1_relu_model(md, "squeeze", C, H, W, M, w, b);
}

/* One kernel (the Relu fused); at 2 threads its tile scratch is per-thread, 2 copies, and
 * the kernel is split; at 1 it has no per-thread scratch and runs as one task. */
static void check_plan(const kn_kprog *p, int threads) {
    CHECK(p->nkernels == 1);
    int per = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (p->bufs[i]->per_thread) {
            per++;
            CHECK(p->bufs[i]->copies == threads);
        }
    CHECK(per == (threads > 1));
    CHECK(threads > 1 ? p->kernels[0]->sched.tasks > 1 : p->kernels[0]->sched.tasks <= 1);
}

static int differs(void) {
    return memcmp(got, want, sizeof got) != 0;
}

static void jit_case(int threads) {
    jh_case1(build, threads, NULL, check_plan, x, got, sizeof got, RUNS, differs);
}

/* The generated C of the program planned for 2 threads (the C uses copy 0). */
static void c_case(const char *tmp) {
    jh_prog j;
    if (!jh_build(build, 2, NULL, &j)) return;
    kn_kprog *p = j.p;
    const float *in[1] = {x};
    float *out[1] = {got};
    size_t in_n[1] = {C * P}, out_n[1] = {M * P};
    memset(got, 0, sizeof got);
    CHECK(ch_run_floats(&j.cx, p, tmp, "conv_tile_tasks_c", 1, in, in_n, 1, out, out_n));
    CHECK(memcmp(got, want, sizeof got) == 0);
    jh_release(&j);
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    data();
    jit_case(1);
    jit_case(2);
    c_case(argv[1]);
    return TEST_DONE();
}
