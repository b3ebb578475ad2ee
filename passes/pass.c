/* The pass table and the pipeline runner (see pass.h).
 *
 * Every pass kiln has is one row below; nothing else decides which passes exist or
 * what they need. A row's `requires` must have been provided by an earlier pass of
 * the same pipeline (the runner refuses the pipeline otherwise, before running
 * anything); `invalidates` clears properties a later pass must provide again (tile
 * adds buffers, so the memory plan must be made after it). */
#include "passes/pass.h"

#include "ir/kir.h"
#include "passes/deseq.h"
#include "passes/schedule.h"
#include "targets/target.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum pass_level { LEVEL_GRAPH, LEVEL_LOWER, LEVEL_KERNEL } pass_level;

typedef struct pass_info {
    const char *name;
    pass_level level;
    kn_status (*graph)(kn_ctx *cx, kn_graph *g);  /* LEVEL_GRAPH */
    kn_status (*kernel)(kn_ctx *cx, kn_kprog *p); /* LEVEL_KERNEL */
    unsigned requires, provides, invalidates;     /* KN_HAVE_* */
    const char *what;
    /* LEVEL_GRAPH passes that read the target (graph NULL) */
    kn_status (*tgraph)(kn_ctx *cx, kn_graph *g, const kn_target *t);
} pass_info;

static kn_status pass_lower(kn_pipeline *pl);

/* clang-format off */
static const pass_info passes[] = {
    {"shape", LEVEL_GRAPH, kn_pass_shape, NULL, 0, KN_HAVE_SHAPES, 0,
     "infer dtypes and shapes of every value", NULL},
    {"qdq", LEVEL_GRAPH, kn_pass_qdq, NULL, KN_HAVE_SHAPES, 0, 0,
     "QuantizeLinear/DequantizeLinear around Conv/MatMul/Gemm into QLinearConv/QLinearMatMul", NULL},
    {"fold", LEVEL_GRAPH, kn_pass_fold, NULL, KN_HAVE_SHAPES, 0, 0,
     "evaluate nodes whose inputs are all constants", NULL},
    {"deseq", LEVEL_GRAPH, kn_pass_deseq, NULL, KN_HAVE_SHAPES, KN_HAVE_TENSORS, 0,
     "sequences and optionals of compile-time length to lists of tensors", NULL},
    {"transpose", LEVEL_GRAPH, kn_pass_transpose, NULL, KN_HAVE_SHAPES, 0, 0,
     "cancel Transpose pairs and merge Reshape chains (passes/transpose.c)", NULL},
    {"layout", LEVEL_GRAPH, NULL, NULL, KN_HAVE_SHAPES, 0, 0,
     "fold NHWC <-> NCHW Transposes at the edges into the Conv next to them (passes/layout.c)",
     kn_pass_layout},
    {"bnfold", LEVEL_GRAPH, kn_pass_bnfold, NULL, KN_HAVE_SHAPES, 0, 0,
     "BatchNormalization into the preceding Conv/Gemm weights, else a per-channel Mul+Add", NULL},
    {"act", LEVEL_GRAPH, kn_pass_act, NULL, KN_HAVE_SHAPES, 0, 0,
     "GELU (Erf, Tanh), SiLU and HardSwish written as arithmetic into one activation", NULL},
    {"norm", LEVEL_GRAPH, kn_pass_norm, NULL, KN_HAVE_SHAPES, 0, 0,
     "LayerNorm and Softmax written as reductions and arithmetic into the single op", NULL},
    {"dynq", LEVEL_GRAPH, kn_pass_dynq, NULL, KN_HAVE_SHAPES, 0, 0,
     "a dynamically quantized layer's float tail (Cast, Mul, Add, Relu) into its "
     "MatMulInteger/ConvInteger", NULL},
    {"fuse", LEVEL_GRAPH, kn_pass_fuse, NULL, KN_HAVE_SHAPES, 0, 0,
     "fold elementwise consumers into the epilogue of the node producing their input", NULL},
    {"weights", LEVEL_GRAPH, kn_pass_weights, NULL, KN_HAVE_SHAPES, 0, 0,
     "with --weights f16|bf16: float32 constants rounded to that precision (passes/lowp.c)", NULL},
    {"chain", LEVEL_GRAPH, kn_pass_chain, NULL, KN_HAVE_SHAPES, 0, 0,
     "runs of elementwise unary/binary ops into the epilogue of the node starting them", NULL},
    {"patch", LEVEL_GRAPH, NULL, NULL, KN_HAVE_SHAPES, 0, 0,
     "on mcu targets, a CNN's first layers run in bands of rows when it lowers peak RAM",
     kn_pass_patch},
    {"lower", LEVEL_LOWER, NULL, NULL, KN_HAVE_SHAPES | KN_HAVE_TENSORS, KN_HAVE_KIR, 0,
     "lower every node to plain kernel-IR loop nests (graph -> kernel IR)", NULL},
    {"rows", LEVEL_KERNEL, NULL, kn_kpass_rows, KN_HAVE_KIR, 0, 0,
     "a Transpose's block of output columns and a Softmax's rows a step (passes/rows.c)", NULL},
    {"depthwise", LEVEL_KERNEL, NULL, kn_kpass_depthwise, KN_HAVE_KIR, 0, KN_HAVE_PLAN,
     "depthwise convolutions as vector row tiles, padding tested inside the kernel", NULL},
    {"pool", LEVEL_KERNEL, NULL, kn_kpass_pool, KN_HAVE_KIR, 0, 0,
     "2-D f32, uint8 and int8 MaxPool as row walks, vectors along rows, bounds tested at the borders "
     "only; f32 GlobalAveragePool 16 channels a step (CPUs)",
     NULL},
    {"stem", LEVEL_KERNEL, NULL, kn_kpass_stem, KN_HAVE_KIR, 0, KN_HAVE_PLAN,
     "convolutions over few input channels as vector tiles along output rows (passes/stem.c)", NULL},
    {"winograd", LEVEL_KERNEL, NULL, kn_kpass_winograd, KN_HAVE_KIR, 0, KN_HAVE_PLAN,
     "3x3 stride-1 convolutions as Winograd F(4x4 or 2x2, 3x3) transforms and tiled products", NULL},
    {"tuned", LEVEL_KERNEL, NULL, kn_kpass_tuned, KN_HAVE_KIR, 0, 0,
     "the tuning table's tiles (passes/tuned.txt, --tuning) for kernels of a tuned shape", NULL},
    {"tile", LEVEL_KERNEL, NULL, kn_kpass_tile, KN_HAVE_KIR, 0, KN_HAVE_PLAN,
     "register tiles and packed weights for convolutions and matrix products", NULL},
    {"lowp", LEVEL_KERNEL, NULL, kn_kpass_lowp, KN_HAVE_KIR, 0, 0,
     "float32 constants stored as f16/bf16 where exact (--weights, half-weight models)", NULL},
    {"vmath", LEVEL_KERNEL, NULL, kn_kpass_vmath, KN_HAVE_KIR, 0, 0,
     "exp, tanh and erf on f32 as vectorizable polynomials (passes/vmath.c)", NULL},
    {"sescale", LEVEL_KERNEL, NULL, kn_kpass_sescale, KN_HAVE_KIR, 0, KN_HAVE_PLAN,
     "squeeze-and-excite's channel scale (Mul) applied in the loads of its one reader", NULL},
    {"parallel", LEVEL_KERNEL, NULL, kn_kpass_parallel, KN_HAVE_KIR, 0, 0,
     "mark independent loops parallel and choose how to split them", NULL},
    {"index", LEVEL_KERNEL, NULL, kn_kpass_index, KN_HAVE_KIR, 0, 0,
     "32-bit loop indices on targets with index_bits 32 where every index value fits", NULL},
    {"plan", LEVEL_KERNEL, NULL, kn_kpass_plan, KN_HAVE_KIR, KN_HAVE_PLAN, 0,
     "buffer lifetimes, in-place reuse and arena offsets", NULL},
    {"threadplan", LEVEL_KERNEL, NULL, kn_kpass_threadplan, KN_HAVE_KIR | KN_HAVE_PLAN, 0, 0,
     "at 2+ threads on a CPU, arena offsets where each thread writes lines it held last", NULL},
};
/* clang-format on */

enum { NPASSES = sizeof passes / sizeof *passes };

static const char *level_name(pass_level l) {
    return l == LEVEL_GRAPH ? "graph" : l == LEVEL_LOWER ? "lower" : "kernel";
}

void kn_pass_list(FILE *f) {
    for (int i = 0; i < NPASSES; i++)
        fprintf(f, "  %-9s %-7s %s\n", passes[i].name, level_name(passes[i].level), passes[i].what);
}

static const pass_info *find(const char *name, size_t len) {
    for (int i = 0; i < NPASSES; i++)
        if (strlen(passes[i].name) == len && !strncmp(passes[i].name, name, len)) return &passes[i];
    return NULL;
}

bool kn_pass_known(const char *name) {
    return find(name, strlen(name)) != NULL;
}

static const char *have_name(unsigned bit) {
    switch (bit) {
    case KN_HAVE_SHAPES: return "shapes (pass 'shape')";
    case KN_HAVE_TENSORS: return "tensors only (pass 'deseq')";
    case KN_HAVE_KIR: return "the kernel IR (pass 'lower')";
    case KN_HAVE_PLAN: return "the memory plan (pass 'plan')";
    default: return "?";
    }
}

const char *kn_pipeline_default(int opt_level) {
    /* deseq may add nodes: shape and fold run again after it */
    if (opt_level <= 0)
        return "shape,fold,shape,deseq,shape,fold,shape,weights,lower,lowp,plan,parallel,index";
    return "shape,qdq,fold,shape,deseq,shape,fold,shape,transpose,bnfold,weights,act,norm,dynq,"
           "fuse,"
           "chain,"
           "patch,"
           "layout,"
           "lower,"
           "rows,"
           "depthwise,"
           "pool,"
           "stem,"
           "winograd,"
           "tuned,"
           "tile,"
           "vmath,lowp,sescale,plan,"
           "parallel,threadplan,index";
}

void kn_pipeline_init(kn_pipeline *pl, kn_ctx *cx, kn_graph *g, const char *name,
                      const kn_target *t) {
    memset(pl, 0, sizeof *pl);
    pl->cx = cx;
    pl->g = g;
    pl->name = name ? name : "model";
    pl->target = kn_target_resolve(t ? t : kn_target_find("generic"));
}

kn_kprog *kn_pipeline_take(kn_pipeline *pl) {
    kn_kprog *p = pl->p;
    pl->p = NULL;
    return p;
}

void kn_pipeline_finish(kn_pipeline *pl) {
    kn_kprog_destroy(pl->p);
    pl->p = NULL;
}

static kn_status pass_lower(kn_pipeline *pl) {
    if (kn_lower_graph(pl->cx, pl->g, pl->name, pl->target, &pl->p)) return pl->cx->status;
    pl->p->schedule = pl->schedule;
    pl->p->tuning = pl->tuning;
    pl->p->release_constants = pl->release_constants;
    pl->p->io_in_arena = pl->io_in_arena;
    pl->p->threads = pl->threads;
    KN_ASSERT(pl->nregions <= KN_MAX_REGIONS);
    pl->p->nregions = pl->nregions;
    for (int r = 0; r < pl->nregions; r++) {
        pl->p->region_name[r] = pl->region_name[r];
        pl->p->region_cap[r] = pl->region_cap[r];
    }
    pl->p->weights = pl->g->weights;
    return kn_schedule_check(pl->cx, pl->schedule, pl->p);
}

/* Whether to verify after every pass: debug builds, or KILN_VERIFY=1. */
static bool verify_each(void) {
#ifndef NDEBUG
    return true;
#else
    const char *v = getenv("KILN_VERIFY");
    return v && v[0] && strcmp(v, "0");
#endif
}

/* Whether `list` (comma-separated names, or "all") names pass `name`. */
static bool names(const char *list, const char *name) {
    if (!list) return false;
    if (!strcmp(list, "all")) return true;
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return true;
        p = e ? e + 1 : NULL;
    }
    return false;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Statements of a kernel-IR tree, for the observer's size figure. */
static long count_stmts(const kn_ks *s) {
    if (!s) return 0;
    long n = 1;
    for (int i = 0; i < s->n; i++) n += count_stmts(s->body[i]);
    return n;
}

/* Checks the whole pipeline against the table before running any of it. */
static kn_status check_pipeline(kn_pipeline *pl, const char *pipeline) {
    kn_ctx *cx = pl->cx;
    unsigned have = pl->have;
    bool lowered = pl->p != NULL;
    for (const char *p = pipeline; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const pass_info *pi = find(p, len);
        if (!pi && len) {
            char names[512];
            size_t at = 0;
            for (int i = 0; i < NPASSES && at < sizeof names; i++)
                at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "",
                                       passes[i].name);
            return kn_diag(cx, NULL, KN_EINVAL, "unknown pass '%.*s' in --passes (passes: %s)",
                           (int)len, p, names);
        }
        if (pi) {
            unsigned missing = pi->requires & ~have;
            if (missing) {
                unsigned bit = missing & (~missing + 1);
                return kn_diag(cx, NULL, KN_EINVAL,
                               "pass '%s' needs %s earlier in the pipeline '%s'", pi->name,
                               have_name(bit), pipeline);
            }
            if (pi->level != LEVEL_KERNEL && lowered)
                return kn_diag(cx, NULL, KN_EINVAL,
                               "pass '%s' works on the graph, which 'lower' already turned "
                               "into the kernel IR earlier in the pipeline '%s'",
                               pi->name, pipeline);
            if (pi->level == LEVEL_LOWER) lowered = true;
            have = (have & ~pi->invalidates) | pi->provides;
        }
        p = e ? e + 1 : NULL;
    }
    return KN_OK;
}

kn_status kn_pipeline_run(kn_pipeline *pl, const char *pipeline) {
    kn_ctx *cx = pl->cx;
    if (check_pipeline(pl, pipeline)) return cx->status;
    bool verify = verify_each();
    for (const char *p = pipeline; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const pass_info *pi = find(p, len);
        p = e ? e + 1 : NULL;
        if (!pi) continue;
        double t0 = now();
        kn_status st = KN_OK;
        switch (pi->level) {
        case LEVEL_GRAPH:
            st = pi->graph ? pi->graph(cx, pl->g) : pi->tgraph(cx, pl->g, pl->target);
            break;
        case LEVEL_LOWER: st = pass_lower(pl); break;
        case LEVEL_KERNEL: st = pi->kernel(cx, pl->p); break;
        }
        if (st || kn_failed(cx)) return cx->status ? cx->status : st;
        double dt = now() - t0;
        pl->have = (pl->have & ~pi->invalidates) | pi->provides;
        if (pl->p) {
            if (verify && kn_kprog_verify(cx, pl->p)) return cx->status;
        } else if (kn_graph_verify(cx, pl->g)) {
            return cx->status;
        }
        if (pl->dump && names(pl->dump_after, pi->name)) {
            fprintf(pl->dump, "; after %s\n", pi->name);
            if (pl->p)
                kn_kprog_print(pl->p, pl->dump);
            else
                kn_graph_print(pl->g, pl->dump);
        }
        if (cx->on_event) {
            long long size = pl->g->nnodes;
            if (pl->p)
                for (int k = size = 0; k < pl->p->nkernels; k++)
                    size += count_stmts(pl->p->kernels[k]->body);
            kn_event_emit(
                cx,
                &(kn_event){.kind = KN_EVENT_PASS, .name = pi->name, .ms = dt * 1e3, .size = size});
        }
    }
    return KN_OK;
}

kn_status kn_pass_run_pipeline(kn_ctx *cx, kn_graph *g, const char *pipeline,
                               const char *dump_after, FILE *dump) {
    return kn_pass_run_pipeline_for(cx, g, pipeline, NULL, dump_after, dump);
}

kn_status kn_pass_run_pipeline_for(kn_ctx *cx, kn_graph *g, const char *pipeline,
                                   const struct kn_target *target, const char *dump_after,
                                   FILE *dump) {
    kn_pipeline pl;
    kn_pipeline_init(&pl, cx, g, NULL, target);
    pl.dump_after = dump_after;
    pl.dump = dump;
    for (const char *p = pipeline; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const pass_info *pi = find(p, len);
        if (pi && pi->level != LEVEL_GRAPH)
            return kn_diag(cx, NULL, KN_EINVAL,
                           "pass '%s' works on the kernel IR; this command runs graph passes "
                           "only",
                           pi->name);
        p = e ? e + 1 : NULL;
    }
    kn_status st = kn_pipeline_run(&pl, pipeline);
    kn_pipeline_finish(&pl);
    return st;
}
