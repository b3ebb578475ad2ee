/* Float MaxPools of stride 2 built from strided vector loads on CPU targets (passes/pool.c:
 * each tap of `lanes` outputs one kx_vload_strided; 3x3 at stride 2 keeps each vector
 * column's last kernel row max for the next output row, pool_rows_kept). The cases:
 *
 *   A  3x3, stride 2, ceil_mode   x: 1x5x28x71, y: 1x5x14x35 (SqueezeNet's pools; the last
 *                                 row's window hangs past the input; 35 columns: two
 *                                 vectors of 16 and one ending at the last column)
 *   B  3x3, stride 2, ceil_mode   x: 1x3x27x27, y: 1x3x13x13 (13 columns: vectors of 8)
 *   C  2x2, stride 2              x: 1x4x24x40, y: 1x4x12x20 (LeNet-5's; no kept rows)
 *   D  3x3, stride 2, ceil_mode   x: 1x512x40x71, y: 1x512x20x35 (19 interior rows: at 2
 *                                 threads in 4 bands of 5 rows, the last guarded, each
 *                                 band's kept row max started anew: pool_bands_kept)
 *
 * Checked: on targets with vectors of 8 floats or more, the kernel's lanes are 8 or more;
 * the JIT's output at 1 and 2 threads (200 runs each) has the bits of a plain-C pool that
 * takes the lowering's max in the lowering's order (acc = -inf, then for each tap in the
 * window's row-major order acc = x != x || x > acc ? x : acc). x holds +0 and -0, several
 * NaNs with different payloads and signs, -inf and repeated values, so a max taken in
 * another order (a NaN or a zero of the other sign kept) or a tap left out shows in the
 * bits.
 * usage: test_pool_strided */
#include "jit_harness.h"
#include "onnx_builder.h"
#include "passes/pass.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { RUNS = 200, MAXN = 512 * 40 * 71 };

typedef struct pcase {
    int c, h, w, k, ceil, oh, ow;
} pcase;

static const pcase cases[] = {
    {5, 28, 71, 3, 1, 14, 35},
    {3, 27, 27, 3, 1, 13, 13},
    {4, 24, 40, 2, 0, 12, 20},
    {512, 40, 71, 3, 1, 20, 35},
};

static const pcase *cur;
static float x[MAXN], want[MAXN], got[MAXN];

static float bits(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* x: mostly small values with ties, and +0, -0, -inf and NaNs of four payloads */
static void data(const pcase *pc) {
    static const uint32_t odd[] = {0x00000000u, 0x80000000u, 0x7fc00001u, 0xffc00002u,
                                   0x7fc00003u, 0xff800000u, 0x7fc00004u};
    int n = pc->c * pc->h * pc->w;
    for (int i = 0; i < n; i++) {
        int r = (i * 7919 + i / 13) % 101;
        x[i] = r < 40 ? bits(odd[r % 4 < 2 ? r % 2 : (r / 4) % 7]) : (float)(r % 9 - 6);
    }
    for (int c = 0; c < pc->c; c++)
        for (int oy = 0; oy < pc->oh; oy++)
            for (int ox = 0; ox < pc->ow; ox++) {
                float m = -INFINITY;
                for (int ky = 0; ky < pc->k; ky++)
                    for (int kx = 0; kx < pc->k; kx++) {
                        int iy = oy * 2 + ky, ix = ox * 2 + kx;
                        if (iy >= pc->h || ix >= pc->w) continue;
                        float v = x[(c * pc->h + iy) * pc->w + ix];
                        if (v != v || v > m) m = v;
                    }
                want[(c * pc->oh + oy) * pc->ow + ox] = m;
            }
}

static void build(model *md) {
    static int64_t dx[4], k[2], s[] = {2, 2}; /* borrowed by the model until it is loaded */
    static char *in[] = {"x"}, *out[] = {"y"};
    dx[0] = 1, dx[1] = cur->c, dx[2] = cur->h, dx[3] = cur->w, k[0] = k[1] = cur->k;
    model_init(md, 13);
    add_input(md, "x", 4, dx);
    Onnx__NodeProto *n = add_node(md, "MaxPool", "pool", 1, in, 1, out);
    add_ints(md, n, "kernel_shape", 2, k);
    add_ints(md, n, "strides", 2, s);
    if (cur->ceil) {
        Onnx__AttributeProto *a =
            add_attr(md, n, "ceil_mode", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
        a->has_i = 1, a->i = cur->ceil;
    }
    add_output(md, "y");
}

static void check_plan(const kn_kprog *p, int threads) {
    CHECK(p->nkernels == 1);
    if (p->target && p->target->vector_bits >= 256) CHECK(p->kernels[0]->sched.lanes >= 8);
    /* case D at 2 threads: one task a band of kept rows */
    if (cur == &cases[3] && threads == 2 && p->target && p->target->vector_bits >= 256)
        CHECK(p->kernels[0]->sched.tasks == 4);
}

static int differs(void) {
    return memcmp(got, want, sizeof(float) * (size_t)(cur->c * cur->oh * cur->ow)) != 0;
}

int main(void) {
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cur = &cases[i];
        data(cur);
        size_t yb = sizeof(float) * (size_t)(cur->c * cur->oh * cur->ow);
        jh_case1(build, 1, NULL, check_plan, x, got, yb, RUNS, differs);
        jh_case1(build, 2, NULL, check_plan, x, got, yb, RUNS, differs);
    }
    return TEST_DONE();
}
