/* kiln compile: model -> generated code in a folder. Today: --emit c. */
#include "codegen/c/emit_c.h"
#include "codegen/outfiles.h"
#include "codegen/llvm/llvm.h"
#include "codegen/opencl/emit_opencl.h"
#include "ir/kir.h"
#include "tools/backend.h"
#include "tools/cli.h"
#include "tools/quant.h"
#include "tools/help.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* --max-arena and --max-weights: refuse the program before anything is written. */
static kn_status check_limits(kn_ctx *cx, const kn_kprog *p, size_t max_arena, size_t max_weights) {
    size_t w = kn_kprog_weight_bytes(p);
    if (p->arena_size > max_arena)
        return kn_diag(
            cx, NULL, KN_ELIMIT,
            "arena needs %zu bytes, more than --max-arena %zu (raise the limit, or make the "
            "inputs smaller: --shape, --dim)",
            p->arena_size, max_arena);
    if (w > max_weights)
        return kn_diag(cx, NULL, KN_ELIMIT, "weights need %zu bytes, more than --max-weights %zu",
                       w, max_weights);
    return KN_OK;
}

/* Writes DIR/NAME.{cl,h,c} for --emit opencl: each streamed to a temporary name (the
 * host C holds the weights as text, several times their size: never in memory), all
 * three renamed once written, so a failure leaves none. */
static int write_opencl(kn_ctx *cx, const kn_kprog *p, const char *dir, const char *name,
                        bool quiet) {
    static const char *const ext[3] = {".cl", ".h", ".c"};
    kn_outfiles o;
    kn_status st = kn_outfiles_open(cx, &o, dir, name, ext, 3);
    if (!st) st = kn_outfiles_finish(cx, &o, kn_emit_opencl_host(cx, p, o.f[0], o.f[1], o.f[2]));
    if (st) return cli_fail(cx);
    cli_progress_end();
    if (quiet) return EXIT_OK;
    printf("wrote %s/%s.cl, %s/%s.h, %s/%s.c (OpenCL)\n%d kernels; device arena %zu bytes\n", dir,
           name, dir, name, dir, name, p->nkernels, p->arena_size);
    return EXIT_OK;
}

/* -v: the sizes a firmware engineer budgets for, one line on stderr: the arena the
 * caller provides, the constant weights, and the generated code as written (the
 * file, so a C file's weight tables count in it unless --weights-file moved them). */
static void verbose_sizes(const kn_kprog *p, const char *code_path) {
    struct stat st;
    long long code = stat(code_path, &st) == 0 ? (long long)st.st_size : -1;
    cli_progress_end();
    fprintf(stderr,
            "kiln: sizes: arena %zu bytes (lower bound %zu), weights %zu bytes, code %lld "
            "bytes (%s)\n",
            p->arena_size, p->arena_lower_bound, kn_kprog_weight_bytes(p), code, code_path);
    for (int r = 0; r < p->nregions; r++)
        fprintf(stderr, "kiln: sizes: region %s %zu bytes (lower bound %zu)\n", p->region_name[r],
                p->region_size[r], p->region_lower_bound[r]);
}

/* --memory NAME=SIZE,...: the arena regions, fastest first, into o (names point into
 * spec's copy, kept in buf). false with a message on stderr (a usage error). */
static bool parse_memory(const char *spec, char *buf, size_t cap, kn_compile_opts *o) {
    o->nregions = 0;
    if (strlen(spec) >= cap) {
        cli_usage_error("compile", "--memory: list too long");
        return false;
    }
    strcpy(buf, spec);
    for (char *s = buf, *next; s; s = next) {
        next = strchr(s, ',');
        if (next) *next++ = 0;
        char *eq = strchr(s, '=');
        if (!eq || eq == s) {
            cli_usage_error("compile", "--memory takes NAME=SIZE,... (fastest first), got '%s'",
                            spec);
            return false;
        }
        *eq = 0;
        bool ident = isalpha((unsigned char)s[0]) || s[0] == '_';
        for (const char *c = s; *c; c++) ident &= isalnum((unsigned char)*c) || *c == '_';
        size_t size = 0;
        if (!ident) {
            cli_usage_error("compile", "--memory: region name '%s' is not a C identifier", s);
            return false;
        }
        if (!cli_parse_bytes(eq + 1, &size) || size == 0) {
            cli_usage_error("compile",
                            "--memory: region '%s' takes a size in bytes above 0 (suffix K, M "
                            "or G), got '%s'",
                            s, eq + 1);
            return false;
        }
        for (int r = 0; r < o->nregions; r++)
            if (!strcmp(o->region_name[r], s)) {
                cli_usage_error("compile", "--memory: region '%s' given twice", s);
                return false;
            }
        if (o->nregions == KN_MAX_REGIONS) {
            cli_usage_error("compile", "--memory: more than %d regions in '%s'", KN_MAX_REGIONS,
                            spec);
            return false;
        }
        o->region_name[o->nregions] = s;
        o->region_cap[o->nregions++] = size;
    }
    return true;
}

/* The figures per region (--memory), after the totals line. */
static void print_regions(const kn_kprog *p) {
    for (int r = 0; r < p->nregions; r++)
        printf("region %s: %zu of %zu bytes (lower bound %zu), %.1f%% of the arena's traffic\n",
               p->region_name[r], p->region_size[r], p->region_cap[r], p->region_lower_bound[r],
               p->arena_traffic > 0 ? 100 * p->region_traffic[r] / p->arena_traffic : 0.0);
}

/* --json: the figures as one JSON object on stdout, in place of the summary lines. The
 * code bytes are the generated code file's (-1 when there is none: --emit h). */
static void print_json(const kn_kprog *p, const char *model, const char *name, const char *target,
                       const char *emit, const char *code_path) {
    struct stat st;
    long long code = code_path && stat(code_path, &st) == 0 ? (long long)st.st_size : -1;
    cli_progress_end();
    printf("{\"model\": ");
    cli_json_str(stdout, model);
    printf(", \"name\": ");
    cli_json_str(stdout, name);
    printf(", \"target\": ");
    cli_json_str(stdout, target);
    printf(", \"emit\": ");
    cli_json_str(stdout, emit);
    printf(", \"kernels\": %d, \"weights_bytes\": %zu, \"code_bytes\": %lld, "
           "\"arena_bytes\": %zu, \"arena_lower_bound\": %zu, \"regions\": [",
           p->nkernels, kn_kprog_weight_bytes(p), code, p->arena_size, p->arena_lower_bound);
    for (int r = 0; r < p->nregions; r++) {
        printf("%s{\"name\": ", r ? ", " : "");
        cli_json_str(stdout, p->region_name[r]);
        printf(", \"capacity\": %zu, \"bytes\": %zu, \"lower_bound\": %zu, \"traffic_share\": "
               "%.4f}",
               p->region_cap[r], p->region_size[r], p->region_lower_bound[r],
               p->arena_traffic > 0 ? p->region_traffic[r] / p->arena_traffic : 0.0);
    }
    printf("]}\n");
}

int cmd_compile(int argc, char **argv) {
    const char *model = NULL, *outdir = NULL, *name = "model", *emit = "c", *target = NULL, *v,
               *binds[64];
    int nbinds = 0, err = 0, dump = 0, json = 0;
    bool io_in_arena = false;
    const char *memory = NULL;
    char membuf[512];
    cli_pipeline po = {0};
    kn_c_options copt = {0};
    size_t max_arena = SIZE_MAX, max_weights = SIZE_MAX, max_string = 0;
    cli_shapes shapes = {0};
    cli_talk talk = {0};
    cli_quant qo = CLI_QUANT_INIT;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            cli_help_command(stdout, cli_command_find("compile"));
            return EXIT_OK;
        } else if (cli_opt(argc, argv, &i, "-o", &v)) {
            outdir = v;
        } else if (cli_opt(argc, argv, &i, "--name", &v)) {
            name = v;
        } else if (cli_opt(argc, argv, &i, "--emit", &v)) {
            emit = v;
        } else if (cli_opt(argc, argv, &i, "--target", &v)) {
            target = v;
        } else if (cli_opt(argc, argv, &i, "--weights-section", &v)) {
            copt.weights_section = v;
        } else if (cli_talk_opt(argv[i], &talk, true)) {
        } else if (cli_flag(argv[i], "--weights-file")) {
            copt.weights_file = true;
        } else if (cli_opt(argc, argv, &i, "--threads", &v)) {
            char *end;
            long n = strtol(v, &end, 10);
            if (*end || end == v || n < 1 || n > 256)
                return cli_usage_error("compile", "--threads takes N from 1 to 256, not '%s'", v);
            copt.threads = (int)n;
        } else if (cli_flag(argv[i], "--arena-in-place-io")) {
            io_in_arena = true;
        } else if (cli_opt(argc, argv, &i, "--memory", &v)) {
            memory = v;
        } else if (cli_flag(argv[i], "--json")) {
            json = 1;
        } else if (cli_flag(argv[i], "--dump-kir")) {
            dump = 1;
        } else if (cli_pipeline_opt(argc, argv, &i, &po)) {
        } else if (cli_opt(argc, argv, &i, "--max-arena", &v)) {
            if (!cli_parse_bytes(v, &max_arena))
                return cli_usage_error("compile", "--max-arena takes a size in bytes, got '%s'", v);
        } else if (cli_opt(argc, argv, &i, "--max-weights", &v)) {
            if (!cli_parse_bytes(v, &max_weights))
                return cli_usage_error("compile", "--max-weights takes a size in bytes, got '%s'",
                                       v);
        } else if (cli_opt(argc, argv, &i, "--max-string-bytes", &v)) {
            if (!cli_parse_bytes(v, &max_string) || max_string < 1 ||
                max_string > ((size_t)1 << 30))
                return cli_usage_error(
                    "compile", "--max-string-bytes takes a size from 1 byte to 1G, got '%s'", v);
        } else if (cli_opt(argc, argv, &i, "--bind", &v)) {
            if (nbinds == 64) return cli_usage_error("compile", "too many --bind options");
            binds[nbinds++] = v;
        } else if (cli_shape_opt(argc, argv, &i, &shapes, &err)) {
            if (err) return EXIT_USAGE;
        } else if (cli_quant_opt(argc, argv, &i, &qo, "compile", &err)) {
            if (err) return err;
        } else if (argv[i][0] == '-') {
            return cli_unknown_option("compile", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else {
            return cli_usage_error("compile", "more than one model given");
        }
    }
    if (!model) return cli_usage_error("compile", "no model given");
    if (!outdir) return cli_usage_error("compile", "no output folder given (-o DIR)");
    if ((err = cli_quant_check(&qo, "compile")) || (err = cli_pipeline_check(&po, "compile")))
        return err;
    bool to_h = !strcmp(emit, "h");
    bool to_c = !strcmp(emit, "c") || to_h;
    bool to_ocl = !strcmp(emit, "opencl");
    if (!to_c && !to_ocl && strcmp(emit, "obj") && strcmp(emit, "asm") && strcmp(emit, "llvm"))
        return cli_usage_error("compile", "unknown --emit '%s' (c, h, obj, asm, llvm, opencl)",
                               emit);
    if (to_ocl && target)
        return cli_usage_error("compile", "--target does not apply to --emit opencl");
    if (!target) target = to_c ? "generic" : "native"; /* C is portable; objects are not */
    const kn_target *tgt = kn_target_find(target);
    if (!tgt)
        return cli_usage_error("compile", "unknown target '%s' (%s)", target, cli_target_names());
    if (!to_c && (copt.weights_file || copt.weights_section))
        return cli_usage_error("compile", "--weights-file and --weights-section apply to --emit c");
    if (!to_c && copt.threads > 1)
        return cli_usage_error("compile", "--threads applies to --emit c and h");
    if (!to_c && io_in_arena)
        return cli_usage_error("compile", "--arena-in-place-io applies to --emit c and h");
    if (!to_c && memory)
        return cli_usage_error("compile", "--memory applies to --emit c and h (the C backend's "
                                          "arenas; not obj, asm, llvm or opencl)");
    kn_compile_opts mem = {0};
    if (memory && !parse_memory(memory, membuf, sizeof membuf, &mem)) return EXIT_USAGE;
    bool ident = isalpha((unsigned char)name[0]) || name[0] == '_';
    for (const char *p = name; *p; p++) ident &= isalnum((unsigned char)*p) || *p == '_';
    if (!ident) return cli_usage_error("compile", "--name '%s' is not a C identifier", name);
    if (copt.weights_section)
        for (const char *p = copt.weights_section; *p; p++)
            if (*p == '"' || *p == '\\' || (unsigned char)*p < 0x20)
                return cli_usage_error("compile", "bad --weights-section name");

    kn_ctx cx;
    cli_ctx_init(&cx, model, &talk);
    kn_graph *g;
    if (qo.mode) { /* the report goes beside the code: DIR/NAME_quant.json */
        char report[4200];
        snprintf(report, sizeof report, "%s/%s_quant.json", outdir, name);
        mkdir(outdir, 0777);
        if (cli_quantize(&cx, model, &shapes, &qo, talk.quiet, report, &g)) return cli_fail(&cx);
    } else if (cli_load(&cx, model, &shapes, &g)) {
        return cli_fail(&cx);
    }
    g->max_string_bytes = (int64_t)max_string;
    kn_arena *a = kn_arena_create();
    kn_kprog *p = NULL;
    int rc = EXIT_OK;
    kn_event_emit(&cx, &(kn_event){.kind = KN_EVENT_STAGE, .name = "passes, lowering, planning"});
    kn_compile_opts copts;
    cli_compile_opts(&po, &copts);
    copts.release_constants = true; /* the graph's weights once repacked (compile memory) */
    copts.io_in_arena = io_in_arena;
    copts.threads = copt.threads; /* per-thread scratch: a copy for each thread */
    copts.nregions = mem.nregions;
    for (int r = 0; r < mem.nregions; r++) {
        copts.region_name[r] = mem.region_name[r];
        copts.region_cap[r] = mem.region_cap[r];
    }
    int opt_level = po.opt_set ? po.opt_level : 3;
    if (cli_apply_binds(&cx, g, a, binds, nbinds) || cli_require_static_inputs(&cx, g) ||
        backend_compile_c(&cx, g, name, to_ocl ? kn_target_find("opencl") : tgt, &copts, &p) ||
        check_limits(&cx, p, max_arena, max_weights)) {
        rc = cli_fail(&cx);
    } else {
        mkdir(outdir, 0777);
        if (dump) kn_kprog_print(p, stdout);
        if (to_ocl) {
            rc = write_opencl(&cx, p, outdir, name, talk.quiet || json);
            char cl[4200];
            snprintf(cl, sizeof cl, "%s/%s.cl", outdir, name);
            if (!rc && talk.verbose) verbose_sizes(p, cl);
            if (!rc && json) print_json(p, model, name, "opencl", emit, cl);
            goto done;
        }
        char obj[4200] = "";
        copt.header_only = to_h;
        if (!to_c) {
            copt.header_only = true;
            snprintf(obj, sizeof obj, "%s/%s.%s", outdir, name,
                     !strcmp(emit, "obj")   ? "o"
                     : !strcmp(emit, "asm") ? "s"
                                            : "ll");
        }
        kn_event_emit(&cx, &(kn_event){.kind = KN_EVENT_STAGE,
                                       .name = to_c ? "emitting C" : "building with LLVM"});
        if ((!to_c && kn_llvm_emit_file(&cx, p, tgt, opt_level, emit, obj)) ||
            kn_emit_c_files(&cx, p, &copt, outdir)) {
            if (obj[0]) remove(obj);
            rc = cli_fail(&cx);
            goto done;
        }
        if (talk.verbose) {
            char code[4200];
            snprintf(code, sizeof code, "%s/%s.%s", outdir, name, to_h ? "h" : "c");
            verbose_sizes(p, obj[0] ? obj : code);
        }
        if (json) {
            char code[4200];
            snprintf(code, sizeof code, "%s/%s.c", outdir, name);
            print_json(p, model, name, tgt->name, emit, to_h ? NULL : obj[0] ? obj : code);
        } else if (talk.quiet) {
        } else if (!to_c || to_h) {
            cli_progress_end();
            printf("wrote %s/%s.h%s%s (target %s)\n", outdir, name, to_h ? "" : ", ", obj,
                   tgt->name);
            printf("%d kernels; arena %zu bytes (lower bound %zu)\n", p->nkernels, p->arena_size,
                   p->arena_lower_bound);
            print_regions(p);
        } else {
            cli_progress_end();
            size_t wbytes = kn_kprog_weight_bytes(p);
            printf("wrote %s/%s.h, %s/%s.c%s%s%s (target %s)\n", outdir, name, outdir, name,
                   copt.weights_file ? ", " : "", copt.weights_file ? name : "",
                   copt.weights_file ? ".weights" : "", tgt->name);
            printf("%d kernels; arena %zu bytes (lower bound %zu, ratio %.3f); weights %zu bytes\n",
                   p->nkernels, p->arena_size, p->arena_lower_bound,
                   p->arena_lower_bound ? (double)p->arena_size / (double)p->arena_lower_bound
                                        : 1.0,
                   wbytes);
            print_regions(p);
        }
    }
done:
    kn_kprog_destroy(p);
    kn_arena_destroy(a);
    kn_graph_destroy(g);
    return rc;
}
