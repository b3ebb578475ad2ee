/* The compile pipeline shared by the CLI, the host API and the tests: one pipeline
 * string (kn_pipeline_default, or the caller's --passes) from the graph to a planned
 * kernel-IR program. `target` decides vector widths, tiles and threads (NULL: the
 * portable generic target). */
#include "ir/kir.h"
#include "passes/pass.h"
#include "passes/schedule.h"
#include "passes/tuned.h"
#include "targets/target.h"

#include <stdint.h>
#include <stdlib.h>

static int cmp_ptr(const void *a, const void *b) {
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Frees the data of g's constants that no buffer of p points into (weights a lowering
 * repacked into the program's own arena, constants folded away), so a compile holds
 * the big weights once instead of twice. Only data in an arena chunk of its own is
 * freed (kn_arena_release); the tensor's data pointer becomes NULL. */
static void release_constants(kn_graph *g, const kn_kprog *p) {
    uintptr_t *used = calloc((size_t)p->nbufs + 1, sizeof *used);
    KN_ASSERT(used);
    int n = 0;
    for (int i = 0; i < p->nbufs; i++)
        if (kn_kbuf_is_weight(p->bufs[i]) && p->bufs[i]->data->data)
            used[n++] = (uintptr_t)p->bufs[i]->data->data;
    qsort(used, (size_t)n, sizeof *used, cmp_ptr);
    for (int v = 0; v < g->nvalues; v++) {
        kn_tensor *t = g->values[v]->constant;
        if (!t || !t->data || t->type.kind != KN_KIND_TENSOR) continue;
        uintptr_t lo = (uintptr_t)t->data, hi = lo + kn_tensor_nbytes(t);
        int a = 0, b = n; /* first used pointer >= lo */
        while (a < b) {
            int m = (a + b) / 2;
            if (used[m] < lo)
                a = m + 1;
            else
                b = m;
        }
        if (a < n && used[a] < hi) continue;
        if (kn_arena_release(g->arena, t->data)) t->data = NULL;
    }
    free(used);
}

kn_status kn_compile_program_opts(kn_ctx *cx, kn_graph *g, const char *name,
                                  const kn_target *target, const kn_compile_opts *opts,
                                  kn_kprog **out) {
    *out = NULL;
    if (opts && opts->weights && kn_weights_prepare(cx, g, opts->weights)) return cx->status;
    kn_pipeline pl;
    kn_pipeline_init(&pl, cx, g, name, target);
    int level = opts && opts->opt_level_set ? opts->opt_level : 3;
    const char *pipeline = opts && opts->passes ? opts->passes : kn_pipeline_default(level);
    kn_schedule *file = NULL;
    kn_tuned *tuning = NULL;
    if (opts) {
        pl.dump_after = opts->dump_after;
        pl.dump = opts->dump;
        pl.schedule = opts->schedule;
        pl.release_constants = opts->release_constants;
        pl.io_in_arena = opts->io_in_arena;
        pl.threads = opts->threads;
        pl.nregions = opts->nregions;
        for (int r = 0; r < opts->nregions; r++) {
            pl.region_name[r] = opts->region_name[r];
            pl.region_cap[r] = opts->region_cap[r];
        }
        if (opts->schedule_file) {
            if (kn_schedule_read(cx, opts->schedule_file, &file)) return cx->status;
            pl.schedule = file;
        }
        if (opts->tuning_file) {
            if (kn_tuned_read(cx, opts->tuning_file, &tuning)) {
                kn_schedule_destroy(file);
                return cx->status;
            }
            pl.tuning = tuning;
        }
    }
    kn_status st = kn_pipeline_run(&pl, pipeline);
    if (!st && pl.p) st = kn_schedule_check_taken(cx, pl.schedule, pl.p);
    if (pl.p) pl.p->schedule = NULL; /* the file's overrides are freed below */
    if (pl.p) pl.p->tuning = NULL;   /* and the user's table (kernels hold copies) */
    kn_schedule_destroy(file);
    kn_tuned_destroy(tuning);
    if (!st && opts && opts->dump_schedule && pl.p)
        st = kn_schedule_write(cx, pl.p, opts->dump_schedule);
    if (st) {
        kn_pipeline_finish(&pl);
        return cx->status;
    }
    if (!(pl.have & KN_HAVE_PLAN)) {
        kn_pipeline_finish(&pl);
        return kn_diag(cx, NULL, KN_EINVAL,
                       "the pipeline '%s' does not end in a planned program: it must lower the "
                       "graph ('lower') and plan memory ('plan') after the last pass that adds "
                       "buffers",
                       pipeline);
    }
    *out = kn_pipeline_take(&pl);
    if (opts && opts->release_constants) release_constants(g, *out);
    return KN_OK;
}
