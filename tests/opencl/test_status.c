/* kiln compile --emit opencl on the corpus's if_flag model (x fixed at [1, 512], so its
 * else branch cannot run and compiles to a run-time error): the generated host code
 * returns 0 and ONNX Runtime's output (test_data_set_0) when the flag takes the valid
 * branch, and KN_STATUS_INVALID_BRANCH (4) read back from the device when it takes the
 * other, then 0 again (the status word is zeroed per run). Exit code 77 (skipped) when
 * there is no OpenCL device. */
#include "frontend/tensorfile.h"
#include "ifflag_ocl.h"
#include "ir/kir.h"
#include "runtime/kn_opencl.h"
#include "../unit/test.h"

#include <math.h>

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
    kn_tensor *x = NULL, *want = NULL;
    snprintf(path, sizeof path, "%s/test_data_set_0/input_0.pb", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &x) == KN_OK);
    snprintf(path, sizeof path, "%s/test_data_set_0/output_0.pb", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &want) == KN_OK);
    if (test_fail) return TEST_DONE();
    ifflag_ocl_state *s = NULL;
    CHECK(ifflag_ocl_create(NULL, &s) == 0);
    if (!s) return TEST_DONE();
    static float y[ifflag_ocl_OUTPUT_0_SIZE];
    int64_t sr16 = 16000, sr8 = 8000;
    for (int run = 0; run < 2; run++) {
        CHECK(ifflag_ocl_run(NULL, s, x->data, &sr16, y) == 0);
        const float *t = want->data;
        int bad = 0;
        for (int i = 0; i < ifflag_ocl_OUTPUT_0_SIZE; i++)
            bad += !(fabsf(y[i] - t[i]) <= 1e-5f + 1e-3f * fabsf(t[i]));
        CHECK(bad == 0);
        CHECK(ifflag_ocl_run(NULL, s, x->data, &sr8, y) == KN_STATUS_INVALID_BRANCH);
    }
    ifflag_ocl_destroy(NULL, s);
    kn_arena_destroy(a);
    return TEST_DONE();
}
