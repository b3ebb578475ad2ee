/* kiln compile --emit opencl on the digits model (host code built at build time by
 * kiln_add_model): the generated host code builds the program and uploads the weights
 * once per state, then runs twice; both runs must match torch's logits
 * (examples/digits/expected_logits.npy) within rtol 1e-3 / atol 1e-5 and classify
 * all 48 images right. Exit code 77 (skipped) when there is no OpenCL device. */
#include "digits_ocl.h"
#include "frontend/tensorfile.h"
#include "runtime/kn_opencl.h"
#include "../unit/test.h"

#include <math.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    if (kn_opencl_probe(NULL) == KN_OPENCL_ENOPLATFORM) {
        printf("no OpenCL platform found\n");
        return 77;
    }
    char path[4096];
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_arena *a = kn_arena_create();
    kn_tensor *x = NULL, *torch = NULL, *labels = NULL;
    snprintf(path, sizeof path, "%s/test_images.npy", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &x) == KN_OK);
    snprintf(path, sizeof path, "%s/expected_logits.npy", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &torch) == KN_OK);
    snprintf(path, sizeof path, "%s/test_labels.npy", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &labels) == KN_OK);
    if (test_fail) return TEST_DONE();
    double t0 = now_ms();
    digits_ocl_state *s = NULL;
    CHECK(digits_ocl_create(NULL, &s) == 0);
    double t1 = now_ms();
    if (!s) return TEST_DONE();
    static float y[digits_ocl_OUTPUT_0_SIZE];
    for (int run = 0; run < 2; run++) {
        double r0 = now_ms();
        CHECK(digits_ocl_run(NULL, s, x->data, y) == 0);
        printf("run %d: %.2f ms\n", run + 1, now_ms() - r0);
        const float *t = torch->data;
        int bad = 0, right = 0;
        for (int i = 0; i < digits_ocl_OUTPUT_0_SIZE; i++)
            bad += !(fabsf(y[i] - t[i]) <= 1e-5f + 1e-3f * fabsf(t[i]));
        for (int i = 0; i < 48; i++) {
            int best = 0;
            for (int c = 1; c < 10; c++)
                if (y[i * 10 + c] > y[i * 10 + best]) best = c;
            right += best == ((int64_t *)labels->data)[i];
        }
        CHECK(bad == 0);
        CHECK(right == 48);
    }
    printf("create (program build + weights upload): %.2f ms\n", t1 - t0);
    digits_ocl_destroy(NULL, s);
    kn_arena_destroy(a);
    return TEST_DONE();
}
