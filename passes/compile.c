/* The compile pipeline shared by the CLI, the host API and the tests: the default
 * graph passes, sequences and optionals to tensors (passes/deseq.c), lowering to the
 * kernel IR, the memory plan, and the parallel-loop analysis. `target` picks vector
 * widths (NULL: scalar code). */
#include "ir/kir.h"
#include "passes/deseq.h"
#include "passes/pass.h"
#include "targets/target.h"

kn_status kn_compile_program(kn_ctx *cx, kn_graph *g, const char *name, const kn_target *target,
                             kn_kprog **out) {
    *out = NULL;
    if (kn_pass_run_pipeline(cx, g, KN_DEFAULT_PASSES, NULL, NULL) || kn_pass_deseq(cx, g))
        return cx->status;
    kn_kprog *p;
    if (kn_lower_graph(cx, g, name, target ? kn_target_resolve(target) : NULL, &p))
        return cx->status;
    if (kn_plan_memory(cx, p) || kn_pass_parallel(cx, p)) {
        kn_kprog_destroy(p);
        return cx->status;
    }
    *out = p;
    return KN_OK;
}
