/* A nest that reads a per-thread scratch it does not write runs on the calling thread, even
 * when a schedule file asks for tasks (passes/parallel.c reads_thread_copy). A convolution
 * tile's partial tile stores into the running thread's copy of the tile scratch
 * (passes/tile.c conv_tile_per_thread) on the calling thread, and a nest after it transposes
 * from there into y; split, a worker's tasks read the worker's copy, whose values are stale.
 * The model is tests/pointwise's y11, whose partial tile failed so in 2-8 of 30 runs of
 * ctest pointwise_llvm_t2 (tests/pointwise/tasks4.sched):
 *
 *   y = Clip(Conv1x1(x), 0, 6)     x: 1x72x10x11 (110 pixels: 13 tiles of 8 and one of 6),
 *                                  40 channels out
 *
 * Inputs and weights are small integers (exact sums), y compared for equality with a plain-C
 * computation. Checked at 2 threads with every nest asked for 4 tasks: a nest reading a
 * per-thread scratch without writing it exists and has at most one task, the tiles' nest is
 * split; the JIT's y on kiln's pool over 2000 runs, y cleared before each.
 * usage: test_thread_copy_tasks TMPDIR */
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C = 72, H = 10, W = 11, M = 40, P = H * W, RUNS = 2000 };

static float x[C * P], w[M * C], lo[1] = {0}, hi[1] = {6}, want[M * P], got[M * P];

static void data(void) {
    for (int i = 0; i < C * P; i++) x[i] = (float)((i * 5 + i / 9) % 5 - 2);
    for (int i = 0; i < M * C; i++) w[i] = (float)((i * 7 + i / 13) % 3 - 1);
    for (int m = 0; m < M; m++)
        for (int p = 0; p < P; p++) {
            long s = 0;
            for (int c = 0; c < C; c++) s += (long)w[m * C + c] * (long)x[c * P + p];
            want[m * P + p] = s < 0 ? 0.0f : s > 6 ? 6.0f : (float)s;
        }
}

static void build(model *md) {
    static int64_t dx[] = {1, C, H, W}, dw[] = {M, C, 1, 1}, ds[] = {0};
    static char *in[] = {"x", "w"}, *mid[] = {"c"}, *clip[] = {"c", "lo", "hi"}, *out[] = {"y"};
    model_init(md, 13);
    add_input(md, "x", 4, dx);
    add_init(md, "w", 4, dw, w, M * C);
    add_init(md, "lo", 0, ds, lo, 1);
    add_init(md, "hi", 0, ds, hi, 1);
    add_node(md, "Conv", "pw", 2, in, 1, mid);
    add_node(md, "Clip", "relu6", 3, clip, 1, out);
    add_output(md, "y");
}

/* The outermost parallel loops under the kernel's loops of one iteration, and whether each
 * reads a per-thread buffer without writing it. */
static void check_plan(const kn_kprog *p, int threads) {
    (void)threads; /* 2 */
    CHECK(p->nkernels == 1);
    if (p->nkernels != 1) return;
    int readers = 0, split = 0;
    unsigned char *use = calloc((size_t)p->nbufs + 1, 1);
    const kn_ks *stack[64];
    int n = 0;
    stack[n++] = p->kernels[0]->body;
    while (n) {
        const kn_ks *b = stack[--n];
        for (int i = 0; i < b->n; i++) {
            const kn_ks *s = b->body[i];
            if (s->kind != KS_FOR) continue;
            if (!(s->annot & KN_LOOP_PARALLEL)) {
                if (n < 64) stack[n++] = s->body[0];
                continue;
            }
            memset(use, 0, (size_t)p->nbufs + 1);
            kn_kernel_uses(s, use);
            bool ro = false;
            for (int id = 0; id < p->nbufs; id++)
                ro = ro || (p->bufs[id]->per_thread && (use[id] & 1) && !(use[id] & 2));
            readers += ro;
            if (ro) CHECK(s->tasks <= 1);
            split += !ro && s->tasks > 1;
        }
    }
    free(use);
    CHECK(readers >= 1);
    CHECK(split >= 1);
}

static int differs(void) {
    return memcmp(got, want, sizeof got) != 0;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    data();
    char sched[4096];
    snprintf(sched, sizeof sched, "%s/thread_copy_tasks.sched", argv[1]);
    FILE *f = fopen(sched, "w");
    CHECK(f != NULL);
    if (!f) return TEST_DONE();
    fputs("kernel 0 'pw' Conv tasks=4\n", f);
    fclose(f);
    jh_case1(build, 2, sched, check_plan, x, got, sizeof got, RUNS, differs);
    return TEST_DONE();
}
