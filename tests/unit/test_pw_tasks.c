/* Pointwise convolutions packed task by task (passes/tile.c tile_pointwise, pw_pack_cols):
 * with its pixel blocks outermost, each task of the parallel block loop packs the block
 * of x it computes into its thread's copy of one block (kl_scratch_thread) and runs the
 * tiles on it. Two 1x1 convolutions of a model built here:
 *
 *   y1 = Conv1x1 (x1) + b1    x1: 1x24x20x30, 600 pixels (18 blocks of 32 and a partial
 *                             one on 16 lanes), 512 channels out
 *   y2 = Conv1x1 (x2) + b2    x2: 2x40x24x24, batch 2: 576 pixels a batch, 18 blocks,
 *                             48 channels out; the block loop inside the batch loop runs
 *                             on the calling thread, packing into copy 0
 *
 * The inputs and weights are small integers, so every sum is exact and the outputs are
 * compared for equality with a plain-C convolution. Pixel values differ from block to
 * block: a thread whose copy the other overwrote between packing and the products would
 * read another block's pixels. Checked: the per-thread scratch and its copies, that the
 * loop is split at two threads, the JIT at 1 and 2 threads on kiln's pool (1000 runs
 * each), and the generated C (copy 0), compiled with $CC (or cc) and run.
 * usage: test_pw_tasks TMPDIR */
#include "c_harness.h"
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

enum { C1 = 24, H1 = 20, W1 = 30, M1 = 512, N2 = 2, C2 = 40, H2 = 24, W2 = 24, M2 = 48 };
enum { P1 = H1 * W1, P2 = H2 * W2, RUNS = 1000 };

static float x1[C1 * P1], w1[M1 * C1], b1[M1], x2[N2 * C2 * P2], w2[M2 * C2], b2[M2];
static float want1[M1 * P1], want2[N2 * M2 * P2], got1[M1 * P1], got2[N2 * M2 * P2];

static void data(void) {
    for (int c = 0; c < C1; c++)
        for (int p = 0; p < P1; p++) x1[c * P1 + p] = (float)((c * 5 + p * 3 + p / 32) % 7 - 3);
    for (int i = 0; i < N2 * C2 * P2; i++) x2[i] = (float)((i * 3 + i / 97) % 7 - 3);
    for (int i = 0; i < M1 * C1; i++) w1[i] = (float)((i * 7 + i / 13) % 5 - 2);
    for (int i = 0; i < M2 * C2; i++) w2[i] = (float)((i * 3 + i / 11) % 5 - 2);
    for (int m = 0; m < M1; m++) b1[m] = (float)(m % 9 - 4);
    for (int m = 0; m < M2; m++) b2[m] = (float)(m % 7 - 3);
    for (int m = 0; m < M1; m++)
        for (int p = 0; p < P1; p++) {
            long s = (long)b1[m];
            for (int c = 0; c < C1; c++) s += (long)w1[m * C1 + c] * (long)x1[c * P1 + p];
            want1[m * P1 + p] = (float)s;
        }
    for (int n = 0; n < N2; n++)
        for (int m = 0; m < M2; m++)
            for (int p = 0; p < P2; p++) {
                long s = (long)b2[m];
                for (int c = 0; c < C2; c++)
                    s += (long)w2[m * C2 + c] * (long)x2[(n * C2 + c) * P2 + p];
                want2[(n * M2 + m) * P2 + p] = (float)s;
            }
}

/* The model (jh_build loads it and compiles it for a number of threads). */
static void build(model *md) {
    static int64_t dx1[] = {1, C1, H1, W1}, dx2[] = {N2, C2, H2, W2}, dw1[] = {M1, C1, 1, 1},
                   dw2[] = {M2, C2, 1, 1}, db1[] = {M1}, db2[] = {M2};
    static char *in1[] = {"x1", "w1", "b1"}, *in2[] = {"x2", "w2", "b2"}, *out1[] = {"y1"},
                *out2[] = {"y2"};
    model_init(md, 13);
    add_input(md, "x1", 4, dx1);
    add_input(md, "x2", 4, dx2);
    add_init(md, "w1", 4, dw1, w1, M1 * C1);
    add_init(md, "b1", 1, db1, b1, M1);
    add_init(md, "w2", 4, dw2, w2, M2 * C2);
    add_init(md, "b2", 1, db2, b2, M2);
    add_node(md, "Conv", "pw1", 3, in1, 1, out1);
    add_node(md, "Conv", "pw2", 3, in2, 1, out2);
    add_output(md, "y1");
    add_output(md, "y2");
}

/* Each kernel packs into a per-thread scratch of `threads` copies; at two threads the
 * first one's block loop is split (the second's runs inside its batch loop). */
static void check_plan(const kn_kprog *p, int threads) {
    for (int k = 0; k < p->nkernels; k++) {
        int per = 0;
        for (int i = 0; i < p->nbufs; i++) {
            const kn_kbuf *b = p->bufs[i];
            if (b->per_thread && b->first == k) {
                per++;
                CHECK(b->copies == threads);
            }
        }
        CHECK(per == 1);
        if (threads > 1 && k == 0) CHECK(p->kernels[k]->sched.tasks > 1);
    }
}

static int wrong(void) {
    return memcmp(got1, want1, sizeof got1) != 0 || memcmp(got2, want2, sizeof got2) != 0;
}

static void jit_case(int threads) {
    jh_prog j;
    if (!jh_build(build, threads, NULL, &j)) return;
    kn_kprog *p = j.p;
    CHECK(p->nkernels == 2);
    check_plan(p, threads);
    const void *in[2] = {x1, x2};
    void *out[2] = {got1, got2};
    size_t bytes[2] = {sizeof got1, sizeof got2};
    int bad = jh_runs(&j.cx, p, threads, in, out, bytes, 2, RUNS, wrong);
    if (bad) printf("jit, %d threads: %d of %d runs wrong\n", threads, bad, RUNS);
    CHECK(bad == 0);
    jh_release(&j);
}

/* The generated C of the program planned for 2 threads (the C uses copy 0). */
static void c_case(const char *tmp) {
    jh_prog j;
    if (!jh_build(build, 2, NULL, &j)) return;
    kn_kprog *p = j.p;
    const float *in[2] = {x1, x2};
    float *out[2] = {got1, got2};
    size_t in_n[2] = {C1 * P1, N2 * C2 * P2}, out_n[2] = {M1 * P1, N2 * M2 * P2};
    memset(got1, 0, sizeof got1);
    memset(got2, 0, sizeof got2);
    CHECK(ch_run_floats(&j.cx, p, tmp, "pw_tasks_c", 2, in, in_n, 2, out, out_n));
    CHECK(!wrong());
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
