/* digits_score: prints the predicted digit of each image (argmax of the model's
 * logits), the true label, and the accuracy. Used by the README's first command.
 * usage: digits_score LOGITS.npy LABELS.npy */
#include "frontend/tensorfile.h"

#include <stdio.h>

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: digits_score LOGITS.npy LABELS.npy\n");
        return 2;
    }
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_arena *a = kn_arena_create();
    kn_tensor *logits, *labels;
    if (kn_tensorfile_read(&cx, a, argv[1], KN_KIND_TENSOR, &logits) ||
        kn_tensorfile_read(&cx, a, argv[2], KN_KIND_TENSOR, &labels)) {
        fprintf(stderr, "digits_score: %s\n", cx.msg);
        kn_arena_destroy(a);
        return 1;
    }
    if (logits->type.rank != 2 || labels->type.rank != 1 ||
        logits->type.dims[0] != labels->type.dims[0]) {
        fprintf(stderr, "digits_score: expected logits [N,10] and labels [N]\n");
        kn_arena_destroy(a);
        return 1;
    }
    int64_t n = labels->type.dims[0], classes = logits->type.dims[1], right = 0;
    printf("predicted:");
    for (int64_t i = 0; i < n; i++) {
        int64_t best = 0;
        for (int64_t c = 1; c < classes; c++)
            if (kn_load_f64(logits->data, logits->type.dtype, (size_t)(i * classes + c)) >
                kn_load_f64(logits->data, logits->type.dtype, (size_t)(i * classes + best)))
                best = c;
        int64_t label = kn_load_i64(labels->data, labels->type.dtype, (size_t)i);
        right += best == label;
        printf(" %lld%s", (long long)best, best == label ? "" : "*");
    }
    printf("\n(* = wrong)\naccuracy: %lld/%lld = %.1f%%\n", (long long)right, (long long)n,
           n ? 100.0 * (double)right / (double)n : 0.0);
    kn_arena_destroy(a);
    return 0;
}
