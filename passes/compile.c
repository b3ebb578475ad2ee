/* The compile pipeline shared by the CLI, the host API and the tests: one pipeline
 * string (kn_pipeline_default, or the caller's --passes) from the graph to a planned
 * kernel-IR program. `target` decides vector widths, tiles and threads (NULL: the
 * portable generic target). */
#include "ir/kir.h"
#include "passes/pass.h"
#include "passes/schedule.h"
#include "targets/target.h"

kn_status kn_compile_program_opts(kn_ctx *cx, kn_graph *g, const char *name,
                                  const kn_target *target, const kn_compile_opts *opts,
                                  kn_kprog **out) {
    *out = NULL;
    kn_pipeline pl;
    kn_pipeline_init(&pl, cx, g, name, target);
    int level = opts && opts->opt_level_set ? opts->opt_level : 3;
    const char *pipeline = opts && opts->passes ? opts->passes : kn_pipeline_default(level);
    kn_schedule *file = NULL;
    if (opts) {
        pl.dump_after = opts->dump_after;
        pl.dump = opts->dump;
        pl.schedule = opts->schedule;
        if (opts->schedule_file) {
            if (kn_schedule_read(cx, opts->schedule_file, &file)) return cx->status;
            pl.schedule = file;
        }
    }
    kn_status st = kn_pipeline_run(&pl, pipeline);
    if (pl.p) pl.p->schedule = NULL; /* the file's overrides are freed below */
    kn_schedule_destroy(file);
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
    return KN_OK;
}
