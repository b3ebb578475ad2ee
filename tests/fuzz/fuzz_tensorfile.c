/* libFuzzer target: arbitrary bytes as a tensor file, decoded as .npy and as an
 * ONNX TensorProto, SequenceProto and OptionalProto. Each decode either succeeds
 * or reports a kn_diag error; its arena is destroyed afterwards. */
#include "frontend/onnx.h"
#include "frontend/tensorfile.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(kn_ctx *cx, kn_status st, const kn_tensor *t) {
    KN_ASSERT(st == cx->status);
    KN_ASSERT(st != KN_OK || t != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    kn_ctx cx;
    kn_arena *a = kn_arena_create();
    kn_tensor *t = NULL;
    kn_ctx_init(&cx, "fuzz.npy");
    check(&cx, kn_npy_decode(&cx, a, data, size, &t), t);
    static const kn_kind kinds[] = {KN_KIND_TENSOR, KN_KIND_SEQUENCE, KN_KIND_OPTIONAL};
    for (size_t i = 0; i < sizeof kinds / sizeof *kinds; i++) {
        t = NULL;
        kn_ctx_init(&cx, "fuzz.pb");
        check(&cx, kn_onnx_decode_value(&cx, a, data, size, kinds[i], &t), t);
    }
    kn_arena_destroy(a);
    return 0;
}
