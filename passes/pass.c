/* The pass table and the pipeline runner. */
#include "passes/pass.h"

#include <string.h>

typedef struct pass_info {
    const char *name;
    kn_status (*run)(kn_ctx *cx, kn_graph *g);
    const char *what;
} pass_info;

static const pass_info passes[] = {
    {"shape", kn_pass_shape, "infer dtypes and shapes of every value"},
    {"fold", kn_pass_fold, "evaluate nodes whose inputs are all constants"},
    {"fuse", kn_pass_fuse, "fold a Relu into the Conv or Add that produces its input"},
};

void kn_pass_list(FILE *f) {
    for (size_t i = 0; i < sizeof passes / sizeof *passes; i++)
        fprintf(f, "  %-8s %s\n", passes[i].name, passes[i].what);
}

kn_status kn_pass_run_pipeline(kn_ctx *cx, kn_graph *g, const char *pipeline,
                               const char *dump_after, FILE *dump) {
    const char *p = pipeline;
    while (p && *p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const pass_info *pi = NULL;
        for (size_t i = 0; i < sizeof passes / sizeof *passes; i++)
            if (strlen(passes[i].name) == len && !strncmp(passes[i].name, p, len)) pi = &passes[i];
        if (!pi && len)
            return kn_diag(cx, NULL, KN_EINVAL, "unknown pass '%.*s' in --passes", (int)len, p);
        if (pi) {
            if (pi->run(cx, g) || kn_graph_verify(cx, g)) return cx->status;
            if (dump_after && dump && !strcmp(dump_after, pi->name)) {
                fprintf(dump, "; after %s\n", pi->name);
                kn_graph_print(g, dump);
            }
        }
        p = e ? e + 1 : NULL;
    }
    return KN_OK;
}
