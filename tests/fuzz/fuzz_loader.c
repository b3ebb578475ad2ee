/* libFuzzer target: arbitrary bytes as an ONNX model, loaded from memory with
 * external data refused (base_dir NULL). Any input must either load or be
 * rejected with a kn_diag error; the graph is destroyed either way. */
#include "frontend/onnx.h"

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    kn_ctx cx;
    kn_ctx_init(&cx, "fuzz.onnx");
    kn_graph *g = NULL;
    kn_status st = kn_onnx_load_memory(&cx, data, size, NULL, "fuzz.onnx", &g);
    KN_ASSERT(st == KN_OK ? g != NULL && !kn_failed(&cx) : g == NULL && st == cx.status);
    kn_graph_destroy(g);
    return 0;
}
