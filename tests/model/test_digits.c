/* The bundled digits CNN through the reference interpreter, compared with the logits
 * torch computed when the model was exported (examples/digits/expected_logits.npy)
 * at rtol 1e-3 / atol 1e-5, and checked to classify all 48 bundled images right
 * (their labels come from scikit-learn's data set). */
#include "frontend/onnx.h"
#include "frontend/tensorfile.h"
#include "ir/interp.h"
#include "passes/pass.h"
#include "../unit/test.h"

#include <math.h>

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    char path[4096];
    kn_ctx cx;
    kn_arena *a = kn_arena_create();
    kn_graph *g = NULL;
    kn_tensor *x = NULL, *want = NULL, *labels = NULL, *y = NULL;
    snprintf(path, sizeof path, "%s/digits.onnx", argv[1]);
    kn_ctx_init(&cx, path);
    CHECK(kn_onnx_load_file(&cx, path, &g) == KN_OK);
    snprintf(path, sizeof path, "%s/test_images.npy", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &x) == KN_OK);
    snprintf(path, sizeof path, "%s/expected_logits.npy", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &want) == KN_OK);
    snprintf(path, sizeof path, "%s/test_labels.npy", argv[1]);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &labels) == KN_OK);
    if (test_fail) return TEST_DONE();
    /* static shapes after binding the batch dimension */
    CHECK(kn_shape_bind(&cx, g, "batch=48", 0) == KN_OK);
    CHECK(kn_pass_run_pipeline(&cx, g, KN_DEFAULT_PASSES, NULL, NULL) == KN_OK);
    CHECK(g->outputs[0]->type.rank == 2 && g->outputs[0]->type.dims[0] == 48 &&
          g->outputs[0]->type.dims[1] == 10);
    CHECK(kn_interp_run(&cx, g, a, &x, &y, 0) == KN_OK);
    if (!y) return TEST_DONE();
    CHECK(kn_type_equal(&y->type, &want->type));
    const float *got = y->data, *ref = want->data;
    int bad = 0, right = 0;
    for (int i = 0; i < 480; i++) bad += !(fabsf(got[i] - ref[i]) <= 1e-5f + 1e-3f * fabsf(ref[i]));
    CHECK(bad == 0);
    for (int i = 0; i < 48; i++) {
        int best = 0;
        for (int c = 1; c < 10; c++)
            if (got[i * 10 + c] > got[i * 10 + best]) best = c;
        right += best == ((int64_t *)labels->data)[i];
    }
    CHECK(right == 48);
    kn_graph_destroy(g);
    kn_arena_destroy(a);
    return TEST_DONE();
}
