/* Winograd's three passes split for two threads (passes/winograd.c wg_input_elems and
 * wg_thread_tiles): in a program for 2 threads the input transform of F(4x4) runs as one
 * task a thread, each computing its half of the 36 Winograd elements of V for every tile
 * (the half of the products that thread then runs), and the output transforms of F(4x4)
 * and F(2x2) as one task a thread over its half of the tiles. The models are ResNet's
 * bottleneck pair, a 1x1 convolution (split by the parallel pass, as in ResNet, so the
 * transforms after it are split too) and a 3x3 one taken in three passes (a schedule
 * file's wchunk=1, whatever the host's L2):
 *
 *   r1 = Relu(Conv1x1(x) + b1), y = Relu(Conv3x3(r1, pads 1) + b)
 *                        F(4x4): x 1x128x28x28, 128 channels (ResNet's layer2 conv2)
 *                        F(2x2): x 1x256x14x14, 256 channels (layer3 conv2)
 *
 * Inputs and weights are small integers. F(2x2)'s transforms are then exact in f32 (U's
 * entries are quarters), so its y is compared for equality with a plain-C computation;
 * F(4x4)'s U has sixths and its y is compared with that reference within check-onnx's
 * rtol 1e-3 and an atol of 1e-5 of the largest output (check-onnx's 1e-5 is for outputs of
 * order 1; these reach 10^3), and bit for bit with the 1-thread program's y, which the
 * split must not change (each element the same sums in the same order). Checked on the
 * plan (the 3x3 kernel's nests: padded copy, input transform, products, output
 * transform): at 1 thread the output transform over the 7 rows of tiles; at 2, where the
 * products split by element, the F(4x4) input transform over 2 groups in 2 tasks and its
 * products in tasks that give each thread the same half of the elements, and each output
 * transform in 2 tasks split as they stand (KN_LOOP_WHOLE); the JIT's y at 1 and 2 threads
 * on kiln's pool (300 runs each), y cleared before each run.
 * usage: test_wg_threads DIR (where the schedule file is written) */
#include "jit_harness.h"
#include "onnx_builder.h"
#include "test.h"

#include <math.h>

enum { RUNS = 300, MAXC = 256, MAXHW = 28 };

static int C, HW, WINO; /* the case: channels in and out, rows and columns, the tile */
static float *x, *w1, *b1, *r1, *w, *b; /* x, conv1's weights, bias and output, conv's */
static float *want, *got, *one;         /* the reference, a run's y, the 1-thread program's y */

static void build(model *md) {
    static int64_t dx[4], dw1[4], dw[4], db[1];
    dx[0] = 1, dx[1] = C, dx[2] = dx[3] = HW;
    dw1[0] = dw1[1] = C, dw1[2] = dw1[3] = 1;
    dw[0] = dw[1] = C, dw[2] = dw[3] = 3;
    db[0] = C;
    static char *in1[] = {"x", "w1", "b1"}, *c1[] = {"c1"}, *o1[] = {"r1"};
    static char *in[] = {"r1", "w", "b"}, *mid[] = {"c"}, *out[] = {"y"};
    model_init(md, 13);
    add_input(md, "x", 4, dx);
    add_init(md, "w1", 4, dw1, w1, (size_t)C * C);
    add_init(md, "b1", 1, db, b1, (size_t)C);
    add_init(md, "w", 4, dw, w, (size_t)C * C * 9);
    add_init(md, "b", 1, db, b, (size_t)C);
    add_node(md, "Conv", "conv1", 3, in1, 1, c1);
    add_node(md, "Relu", "relu1", 1, c1, 1, o1);
    jh_conv3x3_node(md, "conv", in, mid, 1);
    add_node(md, "Relu", "relu", 1, mid, 1, out);
    add_output(md, "y");
}

/* Small integers in x, the weights and biases; want = the model's y summed exactly. */
static void make_data(void) {
    int p = HW * HW;
    for (int i = 0; i < C * p; i++) x[i] = (float)((i * 5 + i / 7) % 3 - 1);
    for (int i = 0; i < C * C; i++) w1[i] = (float)((i * 11 + i / 5) % 3 - 1);
    for (int i = 0; i < C * C * 9; i++) w[i] = (float)((i * 7 + i / 13) % 3 - 1);
    for (int o = 0; o < C; o++) b1[o] = (float)(o % 5 - 2), b[o] = (float)(o % 9 - 4);
    jh_conv1x1_relu(x, w1, b1, r1, C, p, C);
    jh_conv3x3(r1, w, b, want, C, HW, HW, C, 1, true);
}

static size_t ybytes(void) {
    return sizeof(float) * (size_t)C * HW * HW;
}

/* F(2x2): y equal to the reference. F(4x4): within the tolerance above and, after the
 * 1-thread program's first run (have_one), equal to that run's y. */
static bool have_one;
static int differs(void) {
    if (WINO == 2) return memcmp(got, want, ybytes()) != 0;
    float big = 0;
    for (int i = 0; i < C * HW * HW; i++) big = fabsf(want[i]) > big ? fabsf(want[i]) : big;
    for (int i = 0; i < C * HW * HW; i++)
        if (fabsf(got[i] - want[i]) > 1e-5f * big + 1e-3f * fabsf(want[i])) return 1;
    if (!have_one) {
        memcpy(one, got, ybytes());
        have_one = true;
        return 0;
    }
    return memcmp(got, one, ybytes()) != 0;
}

static void check_plan(const kn_kprog *p, int threads) {
    CHECK(p->nkernels == 2);
    if (p->nkernels != 2) return;
    CHECK(p->kernels[1]->sched.wino == WINO);
    const kn_ks *body = p->kernels[1]->body, *nest[8];
    int n = 0;
    for (int i = 0; i < body->n && n < 8; i++) {
        const kn_ks *o = jh_outer_loop(body->body[i]);
        if (o->kind == KS_FOR) nest[n++] = o;
    }
    CHECK(n >= 4); /* pad, input, the products (by batch: one nest), output */
    if (n < 4) return;
    const kn_ks *in = nest[1], *prod = nest[2], *out = nest[n - 1];
    int a = WINO + 2, th = (HW + WINO - 1) / WINO;
    bool by_batch = n == 4 && prod->extent == a * a; /* else by chunks of rows (a big L2) */
    if (threads == 1) {                              /* the output transforms by rows of tiles */
        CHECK(out->extent == th && !(out->annot & KN_LOOP_WHOLE));
        return;
    }
    /* by batch, each thread's products are the elements [0, 18) or [18, 36): thread t runs
     * tasks [ceil(t*n/2), ceil((t+1)*n/2)) of n even chunks (runtime/kn_pool.c) */
    if (WINO == 4 && by_batch) {
        CHECK(in->extent == threads && in->tasks == threads);
        CHECK(prod->tasks % threads == 0 && (a * a) % prod->tasks == 0);
    } else {
        CHECK(in->extent != threads);
    }
    CHECK(out->extent == threads && out->tasks == threads && (out->annot & KN_LOOP_WHOLE));
}

static void run_case(const char *dir, int wino, int c, int hw) {
    WINO = wino, C = c, HW = hw;
    make_data();
    char sched[4096];
    snprintf(sched, sizeof sched, "%s/wg_threads_f%d.sched", dir, wino);
    FILE *f = fopen(sched, "w");
    CHECK(f != NULL);
    if (!f) return;
    fprintf(f, "kernel 1 'conv' Conv wino=%d wchunk=1\n", wino);
    fclose(f);
    have_one = false;
    for (int threads = 1; threads <= 2; threads++)
        jh_case1(build, threads, sched, check_plan, x, got, ybytes(), RUNS, differs);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    x = malloc(sizeof(float) * MAXC * MAXHW * MAXHW);
    r1 = malloc(sizeof(float) * MAXC * MAXHW * MAXHW);
    w1 = malloc(sizeof(float) * MAXC * MAXC);
    b1 = malloc(sizeof(float) * MAXC);
    w = malloc(sizeof(float) * MAXC * MAXC * 9);
    b = malloc(sizeof(float) * MAXC);
    want = malloc(sizeof(float) * MAXC * MAXHW * MAXHW);
    got = malloc(sizeof(float) * MAXC * MAXHW * MAXHW);
    one = malloc(sizeof(float) * MAXC * MAXHW * MAXHW);
    bool ok = x && r1 && w1 && b1 && w && b && want && got && one;
    CHECK(ok);
    if (ok) {
        run_case(dir, 4, 128, 28); /* ResNet's layer2 conv2 */
        run_case(dir, 2, 256, 14); /* ResNet's layer3 conv2 */
    }
    free(x), free(r1), free(w1), free(b1), free(w), free(b);
    free(want), free(got), free(one);
    return TEST_DONE();
}
