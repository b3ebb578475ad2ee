/* A strided float 3x3 convolution in tiles of whole output rows reading x in place with
 * zeroed taps (kn_sched.pad 3, passes/tile.c conv_ztap_suits): no padded copy, the edge
 * tiles in the interior tiles' form, the taps that leave the plane loaded at a clamped
 * column and selected to 0. The models:
 *
 *   y = Conv3x3(x) + b, stride 2, pad 1   x: 1xCxHxW, M channels out, 14x14
 *
 * with C = M = 256 (ResNet-50's layer3.0 conv2), C = 128, M = 256 (ResNet-18's layer3.0
 * conv1), both on 28x28 (the first output column reads the left pad), and C = M = 256 on
 * 27x27 (the last one reads the right pad too); C = M = 64 (2 blocks of output channels:
 * the copy stays).
 *
 * Inputs and weights are small integers, so every sum is exact and y is compared for
 * equality with a plain-C computation (jh_conv3x3). Checked where the tiles are of 14
 * pixels (hosts with 32 vector registers): the schedule's pad (3, or 2 for 64 channels and
 * with a schedule file's pad=2), no copy into a scratch with pad 3 and one with pad 2; y at
 * 1 and 2 threads on kiln's pool (100 runs each, 20 with the file), y cleared before each
 * run. usage: test_zero_taps */
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OH = 14, OW = 14, RUNS = 100, CMAX = 256, HMAX = 28 };

static int C, M, H; /* the case: input and output channels, input rows and columns */
static bool pinned; /* compiled with the schedule file's pad=2 */
static float x[CMAX * HMAX * HMAX], w[CMAX * CMAX * 9], b[CMAX];
static float want[CMAX * OH * OW], got[CMAX * OH * OW];

static void data(void) {
    jh_conv3x3_s2_data(x, w, b, want, C, H, H, M);
}

static void build(model *md) {
    jh_conv3x3_s2_model(md, C, H, H, M, w, b);
}

typedef struct seen {
    kn_kwalker w;
    int copies; /* copies into a scratch: the padded copy's rows */
} seen;

static bool see_copy(kn_kwalker *wk, kn_ks *s) {
    if (s->kind == KS_COPY && s->buf->kind == KB_SCRATCH) ((seen *)wk)->copies++;
    return true;
}

static void check_plan(const kn_kprog *p, int threads) {
    CHECK(p->nkernels == 1);
    if (p->nkernels != 1) return;
    const kn_kernel *k = p->kernels[0];
    seen S = {.w = {.enter = see_copy}};
    kn_kwalk(&S.w, k->body);
    if (k->sched.tile_rows != OW) { /* not tiles of one row: the copy, as before */
        if (threads == 1 && !pinned) printf("%d -> %d channels: not tiles of one row\n", C, M);
        CHECK(k->sched.pad == 2);
        CHECK(S.copies > 0);
        return;
    }
    bool ztap = !pinned && M >= 8 * 32; /* 8 blocks of 32 output channels or more */
    CHECK(k->sched.pad == (ztap ? 3 : 2));
    CHECK(ztap ? S.copies == 0 : S.copies > 0);
}

static int differs(void) {
    return memcmp(got, want, sizeof(float) * M * OH * OW) != 0;
}

int main(void) {
    static const char *sched = "test_zero_taps.sched";
    FILE *f = fopen(sched, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("kernel 0 'conv' Conv pad=2\n", f);
        fclose(f);
    }
    static const int cases[][3] = {{256, 256, 28}, {128, 256, 28}, {256, 256, 27}, {64, 64, 28}};
    for (int i = 0; i < 4; i++) {
        C = cases[i][0], M = cases[i][1], H = cases[i][2];
        data();
        for (int threads = 1; threads <= 2; threads++) {
            pinned = false;
            jh_case1(build, threads, NULL, check_plan, x, got, sizeof(float) * M * OH * OW, RUNS,
                     differs);
            pinned = true;
            jh_case1(build, threads, f ? sched : NULL, check_plan, x, got,
                     sizeof(float) * M * OH * OW, RUNS / 5, differs);
        }
    }
    remove(sched);
    return TEST_DONE();
}
