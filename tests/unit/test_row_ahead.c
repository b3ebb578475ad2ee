/* A float 3x3 convolution whose tiles are whole output rows over a padded copy, reading the
 * next output row's input rows ahead (passes/tile.c conv_wxpf, conv_wxpf_step) where the copy
 * and the weights together pass the L2. The models:
 *
 *   y = Conv3x3(x) + b, stride 2, pad 1   x: 1xCx28x28, M channels out, 14x14
 *
 * with C = M = 256 (ResNet-50's layer3.0 conv2: a 921 KB copy and 2.4 MB of weights) and
 * C = M = 64 (a 230 KB copy and 147 KB of weights: not read ahead).
 *
 * Inputs and weights are small integers, so every sum is exact and y is compared for
 * equality with a plain-C computation. Checked, where the tiles are of 14 pixels (one output
 * row) over a padded copy (hosts with 32 vector registers): the schedule's xpf (14: one row of
 * pixels ahead) and a prefetch of the copy in the kernel exactly where the copy and the weights
 * pass the L2 of the host's target (at most 2.4 MB, or the larger case is skipped), none with a
 * schedule file's xpf=1; the JIT's y at 1 and 2 threads on kiln's pool (300 runs each), y cleared
 * before each run; the copy pinned by a schedule file's pad=2 (256 channels in tiles of whole
 * rows would otherwise read x in place: test_zero_taps). usage: test_row_ahead */
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "targets/target.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { H = 28, W = 28, OH = 14, OW = 14, RUNS = 300, CMAX = 256 };

static int C, M; /* the case: input and output channels */
static bool off; /* compiled with the schedule file's xpf=1 */
static float x[CMAX * H * W], w[CMAX * CMAX * 9], b[CMAX];
static float want[CMAX * OH * OW], got[CMAX * OH * OW];

static void data(void) {
    jh_conv3x3_s2_data(x, w, b, want, C, H, W, M);
}

static void build(model *md) {
    jh_conv3x3_s2_model(md, C, H, W, M, w, b);
}

typedef struct seen {
    kn_kwalker w;
    const kn_kbuf *copy; /* the scratch a copy writes: the padded copy */
    int prefetches;      /* prefetches of it */
} seen;

static bool see_copy(kn_kwalker *wk, kn_ks *s) {
    seen *S = (seen *)wk;
    if (s->kind == KS_COPY && s->buf->kind == KB_SCRATCH) S->copy = s->buf;
    return true;
}

static bool see_prefetch(kn_kwalker *wk, kn_ks *s) {
    seen *S = (seen *)wk;
    if (s->kind == KS_PREFETCH && s->buf == S->copy) S->prefetches++;
    return true;
}

static int64_t l2(void) {
    return kn_target_l2(kn_target_resolve(kn_target_find("native")), 512 * 1024);
}

static void check_plan(const kn_kprog *p, int threads) {
    CHECK(p->nkernels == 1);
    if (p->nkernels != 1) return;
    const kn_kernel *k = p->kernels[0];
    /* tiles of one output row over a padded copy (hosts with 32 vector registers: 14 rows
     * of 2 vectors); elsewhere nothing is read ahead */
    bool rows = k->sched.tile_rows == OW && k->sched.pad == 2;
    if (!rows && threads == 1 && !off) printf("%d channels: not tiles of one row\n", C);
    seen S = {.w = {.enter = see_copy}};
    kn_kwalk(&S.w, k->body);
    CHECK(S.copy != NULL);
    S.w.enter = see_prefetch;
    kn_kwalk(&S.w, k->body);
    bool ahead = rows && !off && ((int64_t)C * (H + 2) * (W + 2) + (int64_t)M * C * 9) * 4 > l2();
    CHECK(k->sched.xpf == (ahead ? OW : 0));
    CHECK(ahead ? S.prefetches == 2 : S.prefetches == 0);
}

static int differs(void) {
    return memcmp(got, want, sizeof(float) * M * OH * OW) != 0;
}

int main(void) {
    static const char *sched = "test_row_ahead.sched";
    FILE *f = fopen(sched, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("kernel 0 'conv' Conv pad=2 xpf=1\n", f);
        fclose(f);
    }
    /* the padded copy pinned (pad=2): where it would not be, 256 channels read x in place
     * (pad 3, test_zero_taps) */
    static const char *copy = "test_row_ahead_copy.sched";
    FILE *fc = fopen(copy, "w");
    CHECK(fc != NULL);
    if (fc) {
        fputs("kernel 0 'conv' Conv pad=2\n", fc);
        fclose(fc);
    }
    static const int cases[][2] = {{256, 256}, {64, 64}};
    for (int i = 0; i < 2; i++) {
        C = cases[i][0], M = cases[i][1];
        if (C == 256 && ((int64_t)C * 30 * 30 + (int64_t)M * C * 9) * 4 <= l2()) {
            printf("skipped %d channels: L2 of %lld bytes\n", C, (long long)l2());
            continue;
        }
        data();
        for (int threads = 1; threads <= 2; threads++) {
            off = false;
            jh_case1(build, threads, fc ? copy : NULL, check_plan, x, got,
                     sizeof(float) * M * OH * OW, RUNS, differs);
            off = true;
            jh_case1(build, threads, f ? sched : NULL, check_plan, x, got,
                     sizeof(float) * M * OH * OW, RUNS / 10, differs);
        }
    }
    remove(sched);
    remove(copy);
    return TEST_DONE();
}
