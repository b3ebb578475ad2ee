/* The compile pipeline shared by the CLI, the host API and the tests: the default
 * graph passes, lowering to the kernel IR, the memory plan, and the parallel-loop
 * analysis. */
#include "ir/kir.h"
#include "passes/pass.h"

kn_status kn_compile_program(kn_ctx *cx, kn_graph *g, const char *name, kn_kprog **out) {
    *out = NULL;
    if (kn_pass_run_pipeline(cx, g, KN_DEFAULT_PASSES, NULL, NULL)) return cx->status;
    kn_kprog *p;
    if (kn_lower_graph(cx, g, name, &p)) return cx->status;
    if (kn_plan_memory(cx, p) || kn_pass_parallel(cx, p)) {
        kn_kprog_destroy(p);
        return cx->status;
    }
    *out = p;
    return KN_OK;
}
