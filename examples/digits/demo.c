/* digits_demo: the bundled digits CNN compiled to C by kiln (at build time, through
 * kiln_add_model in CMake), run on the 48 bundled test images: prints each
 * prediction, the accuracy, and the memory the generated code needs.
 * usage: digits_demo IMAGES.npy LABELS.npy
 * The generated code needs no allocation: the arena is a static buffer here. */
#include "digits.h"
#include "frontend/tensorfile.h"

#include <stdio.h>

static _Alignas(digits_ARENA_ALIGN) unsigned char arena[digits_ARENA_SIZE + 1];
static float logits[digits_OUTPUT_0_SIZE];

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: digits_demo IMAGES.npy LABELS.npy\n");
        return 2;
    }
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_arena *a = kn_arena_create();
    kn_tensor *images, *labels;
    if (kn_tensorfile_read(&cx, a, argv[1], KN_KIND_TENSOR, &images) ||
        kn_tensorfile_read(&cx, a, argv[2], KN_KIND_TENSOR, &labels)) {
        fprintf(stderr, "digits_demo: %s\n", cx.msg);
        kn_arena_destroy(a);
        return 1;
    }
    if (images->type.dtype != KN_F32 || kn_tensor_numel(images) != digits_INPUT_0_SIZE) {
        fprintf(stderr, "digits_demo: expected %d float images\n", (int)digits_INPUT_0_SIZE);
        kn_arena_destroy(a);
        return 1;
    }
    if (digits_run(images->data, logits, arena) != 0) {
        fprintf(stderr, "digits_demo: the model failed\n");
        kn_arena_destroy(a);
        return 1;
    }
    int n = (int)labels->type.dims[0], classes = digits_OUTPUT_0_SIZE / n, right = 0;
    printf("predicted:");
    for (int i = 0; i < n; i++) {
        int best = 0;
        for (int c = 1; c < classes; c++)
            if (logits[i * classes + c] > logits[i * classes + best]) best = c;
        int64_t label = kn_load_i64(labels->data, labels->type.dtype, (size_t)i);
        right += best == label;
        printf(" %d%s", best, best == label ? "" : "*");
    }
    printf("\n(* = wrong)\naccuracy: %d/%d = %.1f%%\n", right, n, 100.0 * right / n);
    printf("generated C: arena %d bytes, weights %d bytes\n", (int)digits_ARENA_SIZE,
           (int)digits_WEIGHTS_SIZE);
    kn_arena_destroy(a);
    return right == n ? 0 : 1;
}
