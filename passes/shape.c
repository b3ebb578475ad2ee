/* Static shape and type inference, and fixing input dims from the command line.
 * requires: nothing; breaks: nothing (sets kn_value.type).
 *
 * The inference itself is kn_infer_graph (ir/infer.c), which subgraph ops also call
 * for their bodies; this pass runs it on the root. */
#include "ir/ops.h"
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>

kn_status kn_pass_shape(kn_ctx *cx, kn_graph *g) {
    return kn_infer_graph(cx, g);
}

kn_status kn_shape_bind(kn_ctx *cx, kn_graph *g, const char *spec, int whole_shape) {
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec)
        return kn_diag(cx, NULL, KN_EINVAL, "expected NAME=VALUE, got '%s'", spec);
    size_t nl = (size_t)(eq - spec);
    if (whole_shape) {
        for (int i = 0; i < g->nin; i++) {
            kn_value *v = g->inputs[i];
            if (strlen(v->name) != nl || strncmp(v->name, spec, nl)) continue;
            int64_t dims[KN_MAX_RANK];
            int r = 0;
            const char *p = eq + 1;
            while (*p) {
                char *end;
                long long d = strtoll(p, &end, 10);
                if (end == p || d < 0 || r == KN_MAX_RANK)
                    return kn_diag(cx, NULL, KN_EINVAL, "bad shape in %s '%s'",
                                   kn_hint_text(cx, KN_HINT_SHAPE_OPT), spec);
                dims[r++] = d;
                p = *end == ',' ? end + 1 : end;
                if (*end && *end != ',')
                    return kn_diag(cx, NULL, KN_EINVAL, "bad shape in %s '%s'",
                                   kn_hint_text(cx, KN_HINT_SHAPE_OPT), spec);
            }
            if (v->type.rank >= 0 && v->type.rank != r)
                return kn_diag(cx, NULL, KN_EINVAL, "%s %s has rank %d, input has rank %d",
                               kn_hint_text(cx, KN_HINT_SHAPE_OPT), spec, r, v->type.rank);
            for (int k = 0; k < r; k++) {
                if (v->type.rank >= 0 && v->type.dims[k] >= 0 && v->type.dims[k] != dims[k])
                    return kn_diag(
                        cx, NULL, KN_EINVAL, "%s %s conflicts with dim %d = %lld of the model",
                        kn_hint_text(cx, KN_HINT_SHAPE_OPT), spec, k, (long long)v->type.dims[k]);
                v->type.dims[k] = dims[k];
                v->type.sym[k] = NULL;
            }
            v->type.rank = r;
            return KN_OK;
        }
        return kn_diag(cx, NULL, KN_EINVAL, "%s: the model has no input '%.*s'",
                       kn_hint_text(cx, KN_HINT_SHAPE_OPT), (int)nl, spec);
    }
    char *end;
    long long val = strtoll(eq + 1, &end, 10);
    if (end == eq + 1 || *end || val < 0)
        return kn_diag(cx, NULL, KN_EINVAL, "bad value in %s '%s'",
                       kn_hint_text(cx, KN_HINT_DIM_OPT), spec);
    int hits = 0;
    for (int i = 0; i < g->nin; i++) {
        kn_type *t = &g->inputs[i]->type;
        for (int k = 0; k < t->rank; k++)
            if (t->sym[k] && strlen(t->sym[k]) == nl && !strncmp(t->sym[k], spec, nl)) {
                t->dims[k] = val;
                t->sym[k] = NULL;
                hits++;
            }
    }
    if (!hits)
        return kn_diag(cx, NULL, KN_EINVAL, "%s: no input dimension is named '%.*s'",
                       kn_hint_text(cx, KN_HINT_DIM_OPT), (int)nl, spec);
    return KN_OK;
}
