/* kiln inspect: the graph after the chosen passes, with a summary of node counts,
 * parameters and FLOPs; --json for tools, --dot for Graphviz. */
#include "ir/ops.h"
#include "ir/kir.h"
#include "passes/pass.h"
#include "targets/target.h"
#include "tools/backend.h"
#include "tools/cli.h"
#include "tools/help.h"
#include "tools/picture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void json_type(FILE *f, const kn_type *t) {
    fprintf(f, "{\"dtype\": \"%s\", \"shape\": ", kn_dtype_name(t->dtype));
    if (t->rank < 0) {
        fprintf(f, "null}");
        return;
    }
    fputc('[', f);
    for (int i = 0; i < t->rank; i++) {
        if (i) fprintf(f, ", ");
        if (t->dims[i] >= 0)
            fprintf(f, "%lld", (long long)t->dims[i]);
        else if (t->sym[i])
            cli_json_str(f, t->sym[i]);
        else
            fprintf(f, "null");
    }
    fprintf(f, "]}");
}

/* Runs the pipeline on g. A pipeline that lowers the graph (it names 'lower') ends in a
 * kernel-IR program: *prog receives it (the caller frees it), else NULL. */
static kn_status run_passes(kn_ctx *cx, kn_graph *g, const kn_target *t, const char *passes,
                            const char *dump, kn_kprog **prog) {
    kn_pipeline pl;
    kn_pipeline_init(&pl, cx, g, "model", t);
    pl.dump_after = dump;
    pl.dump = stdout;
    kn_status st = kn_pipeline_run(&pl, passes);
    *prog = st ? NULL : kn_pipeline_take(&pl);
    kn_pipeline_finish(&pl);
    return st;
}

/* Writes the text of f (an open_memstream of *bufp, *lenp) to path, or as SVG through
 * Graphviz; closes f and frees the text. */
static kn_status write_picture(kn_ctx *cx, const char *path, bool through_dot, FILE *f, char **bufp,
                               size_t *lenp) {
    fclose(f); /* sets *bufp and *lenp */
    kn_status st = through_dot ? pic_dot_to_svg(cx, *bufp, *lenp, path)
                               : pic_write_file(cx, path, *bufp, *lenp);
    free(*bufp);
    return st;
}

/* The memory plan of the lowered model, one temporary a line; with svg, also drawn. */
static int print_memory(kn_ctx *cx, kn_graph *g, const kn_target *t, const char *model,
                        const char *svg, int threads) {
    kn_kprog *p;
    kn_compile_opts opts = {.threads = threads}; /* per-thread scratch: one copy a thread */
    if (cli_require_static_inputs(cx, g) || backend_compile_c(cx, g, "model", t, &opts, &p)) {
        kn_graph_destroy(g);
        return cli_fail(cx);
    }
    if (svg) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        KN_ASSERT(f);
        pic_memory_svg(f, p, model);
        if (write_picture(cx, svg, false, f, &buf, &len)) {
            kn_kprog_destroy(p);
            kn_graph_destroy(g);
            return cli_fail(cx);
        }
    }
    printf("arena %zu bytes, lower bound %zu bytes, ratio %.3f\n", p->arena_size,
           p->arena_lower_bound,
           p->arena_lower_bound ? (double)p->arena_size / (double)p->arena_lower_bound : 1.0);
    printf("%-8s %10s %10s %9s  %s\n", "buffer", "offset", "bytes", "kernels", "value");
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        if (b->kind != KB_TEMP && b->kind != KB_SCRATCH) continue;
        char life[32];
        snprintf(life, sizeof life, "%d..%d", b->first, b->last);
        if (b->view) { /* a band view: where its elements are (passes/views.c) */
            size_t esz = kn_dtype_get(b->dtype)->size;
            printf("%-8s %10s %10zu %9s  %s view of %s at +%lld, %lld of every %lld\n", b->name,
                   "-", (size_t)b->numel * esz, "-", b->onnx ? b->onnx : "(scratch)", b->view->name,
                   (long long)((size_t)b->view_base * esz),
                   (long long)((size_t)b->view_plane * esz),
                   (long long)((size_t)b->view_stride * esz));
            continue;
        }
        printf("%-8s %10zu %10zu %9s  %s%s%s\n", b->name, kn_kbuf_arena_offset(b),
               (size_t)b->numel * kn_dtype_get(b->dtype)->size, life,
               b->onnx ? b->onnx : "(scratch)", b->alias ? " in place of " : "",
               b->alias ? b->alias->name : "");
    }
    kn_kprog_destroy(p);
    kn_graph_destroy(g);
    return EXIT_OK;
}

/* "12,345,678": digits grouped by thousands, for the FLOPs table. */
static const char *grouped(int64_t v, char *buf, size_t cap) {
    char d[32];
    int n = snprintf(d, sizeof d, "%lld", (long long)v), at = 0;
    for (int i = 0; i < n && at + 2 < (int)cap; i++) {
        if (i && d[i - 1] != '-' && (n - i) % 3 == 0) buf[at++] = ',';
        buf[at++] = d[i];
    }
    buf[at] = 0;
    return buf;
}

/* True if a FLOP count of n is known: every output shape is static. */
static bool flops_known(const kn_node *n) {
    for (int k = 0; k < n->nout; k++)
        if (n->out[k] && n->out[k]->type.kind == KN_KIND_TENSOR &&
            !kn_type_static(&n->out[k]->type))
            return false;
    return true;
}

/* The FLOPs of each node that does arithmetic, with its share, as IR comments, and
 * the note saying what is counted. Returns the number of nodes whose count is unknown. */
static int print_flops(const kn_graph *g, int64_t total) {
    int unknown = 0, shown = 0;
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        int64_t f = kn_node_flops(n);
        bool known = flops_known(n);
        if (known && !f) continue;
        if (!shown++)
            printf("; FLOPs per node (a multiply-add counts 2, a bias add and an elementwise op 1 "
                   "per output element; fused epilogues, pooling and data movement count 0):\n");
        char b[32];
        if (!known) {
            unknown++;
            printf(";  %13s          %s (%s): output shape not static\n", "?", n->name, n->op_type);
        } else {
            printf(";  %13s %6.1f%%  %s (%s)\n", grouped(f, b, sizeof b),
                   total ? 100.0 * (double)f / (double)total : 0.0, n->name, n->op_type);
        }
    }
    return unknown;
}

int cmd_inspect(int argc, char **argv) {
    const char *model = NULL, *passes = KN_GRAPH_PASSES, *dump = NULL, *dot = NULL, *svg = NULL,
               *profile = NULL, *v, *target = "generic";
    int json = 0, err = 0, memory = 0, threads = 1;
    cli_shapes shapes = {0};
    cli_talk talk = {0};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            cli_help_command(stdout, cli_command_find("inspect"));
            return EXIT_OK;
        } else if (cli_flag(argv[i], "--list-passes")) {
            kn_pass_list(stdout);
            /* the pipelines, so scripts (bench/run.sh --passes-effect) can take them apart */
            printf("default pipeline (-O1 to -O3): %s\n", kn_pipeline_default(2));
            printf("-O0 pipeline: %s\n", kn_pipeline_default(0));
            return EXIT_OK;
        } else if (cli_opt(argc, argv, &i, "--passes", &v)) {
            passes = v;
        } else if (cli_opt(argc, argv, &i, "--dump-after", &v)) {
            dump = v;
        } else if (cli_opt(argc, argv, &i, "--target", &v)) {
            target = v;
        } else if (cli_opt(argc, argv, &i, "--threads", &v)) {
            threads = atoi(v);
            if (threads < 1 || threads > 256)
                return cli_usage_error("inspect", "--threads must be 1 to 256, not '%s'", v);
        } else if (cli_opt(argc, argv, &i, "--dot", &v)) {
            dot = v;
        } else if (cli_opt(argc, argv, &i, "--svg", &v)) {
            svg = v;
        } else if (cli_opt(argc, argv, &i, "--profile", &v)) {
            profile = v;
        } else if (cli_talk_opt(argv[i], &talk, false)) {
        } else if (cli_flag(argv[i], "--json")) {
            json = 1;
        } else if (cli_flag(argv[i], "--memory")) {
            memory = 1;
        } else if (cli_shape_opt(argc, argv, &i, &shapes, &err)) {
            if (err) return EXIT_USAGE;
        } else if (argv[i][0] == '-') {
            return cli_unknown_option("inspect", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else {
            return cli_usage_error("inspect", "more than one model given");
        }
    }
    if (!model) return cli_usage_error("inspect", "no model given");
    const kn_target *tgt = kn_target_find(target);
    if (!tgt)
        return cli_usage_error("inspect", "unknown target '%s' (%s)", target, cli_target_names());
    kn_ctx cx;
    cli_ctx_init(&cx, model, &talk);
    kn_graph *g;
    if (cli_load(&cx, model, &shapes, &g)) return cli_fail(&cx);
    if (memory && (dot || profile))
        return cli_usage_error("inspect", "--memory draws with --svg only (not --dot, --profile)");
    pic_profile prof = {0};
    if (profile && pic_profile_read(&cx, profile, &prof)) return cli_fail(&cx);
    if (memory) return print_memory(&cx, g, tgt, model, svg, threads);
    kn_kprog *prog = NULL;
    if (run_passes(&cx, g, tgt, passes, dump, &prog)) {
        kn_graph_destroy(g);
        return cli_fail(&cx);
    }
    if (prog) { /* lowered: the program is what there is to see */
        kn_kprog_print(prog, stdout);
        kn_kprog_destroy(prog);
        kn_graph_destroy(g);
        return EXIT_OK;
    }
    int64_t params = 0, flops = 0;
    for (int i = 0; i < g->nvalues; i++)
        if (g->values[i]->constant && g->values[i]->type.kind == KN_KIND_TENSOR)
            params += kn_type_numel(&g->values[i]->type);
    for (int i = 0; i < g->nnodes; i++) flops += kn_node_flops(g->nodes[i]);
    if (json) {
        printf("{\"model\": ");
        cli_json_str(stdout, model);
        bool all = true;
        for (int i = 0; i < g->nnodes; i++) all = all && flops_known(g->nodes[i]);
        printf(", \"opset\": %d, \"parameters\": %lld, \"flops\": ", g->opset, (long long)params);
        if (all)
            printf("%lld, \"inputs\": [", (long long)flops);
        else
            printf("null, \"inputs\": [");
        for (int i = 0; i < g->nin; i++) {
            printf("%s{\"name\": ", i ? ", " : "");
            cli_json_str(stdout, g->inputs[i]->name);
            printf(", \"type\": ");
            json_type(stdout, &g->inputs[i]->type);
            printf("}");
        }
        printf("], \"outputs\": [");
        for (int i = 0; i < g->nout; i++) {
            printf("%s{\"name\": ", i ? ", " : "");
            cli_json_str(stdout, g->outputs[i]->name);
            printf(", \"type\": ");
            json_type(stdout, &g->outputs[i]->type);
            printf("}");
        }
        printf("], \"nodes\": [");
        for (int i = 0; i < g->nnodes; i++) {
            const kn_node *n = g->nodes[i];
            printf("%s{\"name\": ", i ? ", " : "");
            cli_json_str(stdout, n->name);
            printf(", \"op\": ");
            cli_json_str(stdout, n->op_type);
            if (flops_known(n))
                printf(", \"flops\": %lld}", (long long)kn_node_flops(n));
            else
                printf(", \"flops\": null}");
        }
        printf("]}\n");
    } else {
        kn_graph_print(g, stdout);
        int unknown = print_flops(g, flops);
        char b[32];
        if (unknown)
            printf("; %d nodes, %lld parameters, FLOPs per run unknown (%d nodes have symbolic "
                   "shapes: fix them with --dim or --shape), opset %d\n",
                   g->nnodes, (long long)params, unknown, g->opset);
        else
            printf("; %d nodes, %lld parameters, %s FLOPs per run, opset %d\n", g->nnodes,
                   (long long)params, grouped(flops, b, sizeof b), g->opset);
    }
    int rc = EXIT_OK;
    for (int k = 0; k < 2 && !rc; k++) { /* --dot, then --svg */
        const char *path = k ? svg : dot;
        if (!path) continue;
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        KN_ASSERT(f);
        pic_graph_dot(f, g, profile ? &prof : NULL);
        if (write_picture(&cx, path, k == 1, f, &buf, &len)) rc = cli_fail(&cx);
    }
    pic_profile_free(&prof);
    kn_graph_destroy(g);
    return rc;
}
