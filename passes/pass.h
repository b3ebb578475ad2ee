/* The pass table and the pipeline that runs it: graph passes, the lowering to the
 * kernel IR, and kernel-IR passes, in one table and one pipeline string.
 *
 * A compilation (kn_pipeline) holds the graph, after `lower` the kernel-IR program,
 * the target, and which properties the passes run so far established (KN_HAVE_*).
 * Each pass is a row of the table in passes/pass.c: its name, the level it works at,
 * what it requires, provides and invalidates, and a one-line description. A
 * pipeline is a comma-separated string of pass names ("shape,fold,fuse,lower,tile,
 * parallel,plan"), as in LLVMRunPasses; the runner refuses one whose pass lacks a
 * property no earlier pass provided, naming both. After every pass the runner
 * verifies the IR it touched (debug builds, or KILN_VERIFY=1; graph verifier or
 * kernel-IR verifier), prints it when asked (--dump-after), and reports the pass's
 * time and the IR's size as a KN_EVENT_PASS to the context's event hook (kiln -v):
 * the size is graph nodes before lowering, kernel-IR statements after.
 *
 * Graph passes have the signature kn_status kn_pass_NAME(kn_ctx *cx, kn_graph *g);
 * kernel passes kn_status kn_kpass_NAME(kn_ctx *cx, kn_kprog *p) and read the
 * target from p->target; `lower` turns the graph into the program. */
#ifndef KN_PASS_H
#define KN_PASS_H

#include "ir/graph.h"

#include <stdio.h>

struct kn_target;
struct kn_contract;
struct kn_kprog;
struct kn_schedule;

/* ---- graph passes ---- */
kn_status kn_pass_shape(kn_ctx *cx, kn_graph *g);
kn_status kn_pass_fold(kn_ctx *cx, kn_graph *g);
kn_status kn_pass_fuse(kn_ctx *cx, kn_graph *g);
kn_status kn_pass_dynq(kn_ctx *cx, kn_graph *g);
kn_status kn_pass_transpose(kn_ctx *cx, kn_graph *g);
kn_status kn_pass_layout(kn_ctx *cx, kn_graph *g, const struct kn_target *t);
/* graph passes of the optimization layer (passes/bnfold.c ...) */
kn_status kn_pass_bnfold(kn_ctx *cx, kn_graph *g);
kn_status kn_pass_act(kn_ctx *cx, kn_graph *g);
kn_status kn_pass_qdq(kn_ctx *cx, kn_graph *g);
kn_status kn_pass_norm(kn_ctx *cx, kn_graph *g);
kn_status kn_pass_chain(kn_ctx *cx, kn_graph *g);
/* A CNN's first layers run in bands of rows on targets of kind mcu, when that lowers the
 * peak of live activations (passes/patch.c). Graph passes that need the target take it. */
kn_status kn_pass_patch(kn_ctx *cx, kn_graph *g, const struct kn_target *t);
/* Reduced-precision weights (passes/lowp.c): rounds float32 constants to g->weights
 * when g->weights_round. */
kn_status kn_pass_weights(kn_ctx *cx, kn_graph *g);
/* --weights f16|bf16 on g: sets g->weights and runs KN_WEIGHTS_PREPARE (folding, so
 * BatchNormalization is in the weights before they are rounded, then 'weights'). Every
 * backend, the interpreter included, runs the graph this leaves. Idempotent. */
kn_status kn_weights_prepare(kn_ctx *cx, kn_graph *g, kn_dtype t);
#define KN_WEIGHTS_PREPARE "shape,qdq,fold,shape,bnfold,shape,weights"
/* Float32 constants with fewer elements are never rounded nor narrowed (scalars the
 * lowerings read at compile time, epsilons). */
#define KN_WEIGHTS_MIN_NUMEL 16
/* Sets g->weights (storage only, no rounding) when g holds float16/bfloat16 constants of
 * KN_WEIGHTS_MIN_NUMEL elements or more that a Cast turns into float32 (a model exported
 * with half weights computing in float). Call before folding. */
void kn_weights_detect(kn_graph *g);

/* Constant-folds node n if its inputs are constants (see passes/fold.c): its outputs
 * become constants and *folded is set; the caller drops n from its graph. */
kn_status kn_fold_node(kn_ctx *cx, kn_node *n, kn_arena *scratch, bool *folded);

/* Fixes symbolic/unknown input dims: spec "NAME=VALUE" (every dim named NAME) or
 * "INPUT=1,3,224,224" (the whole shape of graph input INPUT). */
kn_status kn_shape_bind(kn_ctx *cx, kn_graph *g, const char *spec, int whole_shape);

/* ---- kernel passes (p->target says what to do for) ---- */
/* 3x3 stride-1 convolutions as Winograd transforms around tiled products
 * (passes/winograd.c). */
kn_status kn_kpass_winograd(kn_ctx *cx, struct kn_kprog *p);
/* Whether the winograd pass can take contraction d on target t, if a schedule file asks
 * for it (wino=2 or 4) where the pass chose the direct convolution: `kiln tune`'s
 * candidates. */
bool kn_winograd_suits(const struct kn_contract *d, const struct kn_target *t);
/* Register tiles and packed weights for contraction kernels (passes/tile.c). */
/* passes/rows.c: a Transpose's block of output columns and a Softmax row kernel's rows
 * a step (kn_sched.tblock, smrows) from the target and a schedule file. */
kn_status kn_kpass_rows(kn_ctx *cx, struct kn_kprog *p);
kn_status kn_kpass_tile(kn_ctx *cx, struct kn_kprog *p);
/* The tuning table's entries for the kernels 'tile' will tile (passes/tuned.c). */
kn_status kn_kpass_tuned(kn_ctx *cx, struct kn_kprog *p);
/* exp, tanh and erf on f32 as polynomials (passes/vmath.c, vmath.h). */
kn_status kn_kpass_vmath(kn_ctx *cx, struct kn_kprog *p);
/* Squeeze-and-excite's channel scale applied in the loads of the Mul's one reader
 * (passes/sescale.c). */
kn_status kn_kpass_sescale(kn_ctx *cx, struct kn_kprog *p);
/* Depthwise convolutions as row tiles, padding inside the kernel (passes/depthwise.c). */
kn_status kn_kpass_depthwise(kn_ctx *cx, struct kn_kprog *p);
/* Convolutions over few input channels (a CNN's first layer) as vector tiles along the
 * output rows over a phase-split padded copy of the input (passes/stem.c). */
kn_status kn_kpass_stem(kn_ctx *cx, struct kn_kprog *p);
/* 2-D f32 MaxPool as row walks with bounds tests at the borders only (passes/pool.c). */
kn_status kn_kpass_pool(kn_ctx *cx, struct kn_kprog *p);
/* Marks independent loops KN_LOOP_PARALLEL and chooses their split (passes/parallel.c). */
kn_status kn_kpass_parallel(kn_ctx *cx, struct kn_kprog *p);
/* Loop indices narrowed to the target's index_bits where every index value fits
 * (passes/index.c). */
kn_status kn_kpass_index(kn_ctx *cx, struct kn_kprog *p);
/* Step 0a of the plan (passes/views.c): the band Slices and Concat parts that can be
 * views of their parent are made so (their copies removed), on mcu targets. */
kn_status kn_plan_views(kn_ctx *cx, struct kn_kprog *p);
/* The arena the plan would give p now, its kernels unchanged (passes/plan.c). */
size_t kn_plan_arena_dry(struct kn_kprog *p);
/* Buffer lifetimes, in-place reuse and arena offsets (passes/plan.c). */
kn_status kn_kpass_plan(kn_ctx *cx, struct kn_kprog *p);
/* The plan's offsets chosen again so that each thread writes lines it held last, at
 * more than one thread on a CPU (passes/plan.c; KILN_THREAD_PLAN=0: off). */
kn_status kn_kpass_threadplan(kn_ctx *cx, struct kn_kprog *p);
/* Float32 constants exactly representable in p->weights stored in it (passes/lowp.c). */
kn_status kn_kpass_lowp(kn_ctx *cx, struct kn_kprog *p);

/* ---- properties a compilation has established ---- */
enum {
    KN_HAVE_SHAPES = 1 << 0,  /* every value's type inferred (shape) */
    KN_HAVE_TENSORS = 1 << 1, /* no sequences or optionals left (deseq) */
    KN_HAVE_KIR = 1 << 2,     /* lowered: the kernel-IR program exists (lower) */
    KN_HAVE_PLAN = 1 << 3,    /* arena offsets assigned (plan) */
};

/* A compilation in progress. Create with kn_pipeline_init; the program (p), once
 * lowered, is the caller's to free with kn_kprog_destroy (kn_pipeline_take). */
typedef struct kn_pipeline {
    kn_ctx *cx;
    kn_graph *g;                    /* borrowed; rewritten by graph passes */
    struct kn_kprog *p;             /* after lower; owned until taken */
    const struct kn_target *target; /* resolved (never NULL) */
    const char *name;               /* the program's name, a C identifier */
    unsigned have;                  /* KN_HAVE_* */
    /* observation, all optional (each pass also reports KN_EVENT_PASS to cx) */
    const char *dump_after; /* print the IR after this pass (comma list, or "all") */
    FILE *dump;
    const struct kn_schedule *schedule; /* --schedule FILE: per-kernel overrides, or NULL */
    const struct kn_tuned *tuning;      /* --tuning FILE: a user's tuning table, or NULL */
    bool release_constants;             /* kn_compile_opts.release_constants, for the program */
    bool io_in_arena;                   /* kn_compile_opts.io_in_arena, for the program */
    int threads;                        /* kn_compile_opts.threads, for the program */
    int nregions;                       /* kn_compile_opts' regions, for the program */
    const char *region_name[KN_MAX_REGIONS];
    size_t region_cap[KN_MAX_REGIONS];
} kn_pipeline;

/* Prepares a compilation of g for target t (NULL: generic C) named name. */
void kn_pipeline_init(kn_pipeline *pl, kn_ctx *cx, kn_graph *g, const char *name,
                      const struct kn_target *t);
/* Runs the comma-separated pipeline; unknown names, a pass whose requirement no
 * earlier pass provided, and a graph pass after lower are KN_EINVAL errors. */
kn_status kn_pipeline_run(kn_pipeline *pl, const char *pipeline);
/* The program, which the caller now owns (NULL if not lowered). */
struct kn_kprog *kn_pipeline_take(kn_pipeline *pl);
/* Frees what the pipeline still owns (not the graph). */
void kn_pipeline_finish(kn_pipeline *pl);

/* Graph passes only, on g (inspect, shape analysis): kn_pipeline_run without a
 * target; kernel passes in the list are an error. */
kn_status kn_pass_run_pipeline(kn_ctx *cx, kn_graph *g, const char *pipeline,
                               const char *dump_after, FILE *dump);
/* The same with the target the graph passes that depend on one read (layout, fusion
 * rules): what a compilation for it would run before lowering. */
kn_status kn_pass_run_pipeline_for(kn_ctx *cx, kn_graph *g, const char *pipeline,
                                   const struct kn_target *target, const char *dump_after,
                                   FILE *dump);
/* Prints the registered passes, one per line: name, level, description. */
void kn_pass_list(FILE *f);
/* Whether name is a registered pass. */
bool kn_pass_known(const char *name);

/* Default graph passes, for inspect. */
#define KN_GRAPH_PASSES "shape,qdq,fold,shape,transpose,bnfold,act,norm,dynq,fuse,chain,layout"
#define KN_DEFAULT_PASSES KN_GRAPH_PASSES
/* The whole pipeline at optimization level 0..3 (-O): what compile, run and bench use
 * unless --passes is given. */
const char *kn_pipeline_default(int opt_level);

/* Options of a compilation, from the command line or the host API. */
typedef struct kn_compile_opts {
    const char *passes;     /* pipeline, or NULL: kn_pipeline_default(opt_level) */
    int opt_level;          /* 0..3; default pipeline choice (0 reads as 3 unless set) */
    bool opt_level_set;     /* opt_level was given */
    const char *dump_after; /* see kn_pipeline */
    FILE *dump;
    const struct kn_schedule *schedule; /* per-kernel overrides, or NULL */
    const char *schedule_file;          /* or read them from this file (--schedule) */
    const char *tuning_file;            /* a tuning table searched before the shipped one
                                           (--tuning, passes/tuned.c), or NULL */
    const char *dump_schedule;          /* write the final schedules here (--dump-schedule) */
    bool release_constants;             /* free the graph's constant data the program does not read
                                           (weights it repacked): the graph keeps its shapes only */
    kn_dtype weights; /* --weights: KN_F16 or KN_BF16 (kn_weights_prepare first), or KN_UNDEF */
    bool io_in_arena; /* --arena-in-place-io: inputs and outputs planned inside the arena */
    int threads;      /* threads the program will run on (the JIT's pool, the caller included;
                         0: one): the plan holds that many copies of each per-thread scratch,
                         and the program must not run on more */
    int nregions;     /* --memory NAME=SIZE,...: arena regions, fastest first (at most 4) */
    const char *region_name[KN_MAX_REGIONS]; /* C identifiers, distinct */
    size_t region_cap[KN_MAX_REGIONS];       /* bytes each may take */
} kn_compile_opts;

/* Runs the pipeline (opts may be NULL: the default one at -O3) on g: a program ready
 * to emit, named `name` (a C identifier); free with kn_kprog_destroy(). */
kn_status kn_compile_program_opts(kn_ctx *cx, kn_graph *g, const char *name,
                                  const struct kn_target *target, const kn_compile_opts *opts,
                                  struct kn_kprog **out);
static inline kn_status kn_compile_program(kn_ctx *cx, kn_graph *g, const char *name,
                                           const struct kn_target *target, struct kn_kprog **out) {
    return kn_compile_program_opts(cx, g, name, target, NULL, out);
}

#endif
