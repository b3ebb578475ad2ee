/* kiln tune: measures candidate schedules per kernel on this machine and writes the best
 * as a schedule file (passes/schedule.c) that --schedule reads back.
 *
 * As TVM's and Halide's autotuners, in small. The passes' own schedule is the baseline.
 * For each kernel a short list of candidates is built from its baseline record: the
 * register tile one row or one vector smaller or larger, on float pointwise convolutions
 * and matrix products tiles of vectors of half the lanes (2 nv - 1 to 2 nv + 1 of them,
 * half_tiles), the parallel split halved or
 * doubled (more than one thread), the other Winograd tiles (1, 2, 4) where the kernel has
 * one, and the Winograd tiles where the passes chose the direct convolution of a 3x3 the
 * winograd pass can take, the other padding or prefetch choice where it has one, span or
 * row tiles where a float windowed convolution's rows are narrower than its tile, split's
 * legal alternative where the kernel's kind has one (split_alt), and the GotoBLAS order's
 * blocks of rows (mc) for a float MatMul or Gemm with rows for two, a Transpose's blocks of
 * output columns (tblock) and a Softmax row kernel's rows a step (smrows, passes/rows.c).
 * Kernels are independent, so
 * round j compiles the model once with candidate j of every kernel that has one (the
 * others keep the passes' choice) and runs it beside the baseline, compiled once at the
 * start, run by run interleaved (so that drift in the machine's speed falls on both),
 * with a timing hook around each kernel; each kernel's time is its median over --runs
 * runs (the calling thread's CPU time at one thread, wall time with more). Per kernel the
 * candidate with the best ratio to the baseline, if at least 1% faster, wins; a
 * confirmation round then measures the winners together beside the baseline again, and
 * a change is kept only if it was 1% faster in both. The kept changes are compiled once
 * more and that compile's schedule (every field the passes used) is
 * written to -o; the whole model is then timed with the written file against the default,
 * run by run interleaved. A candidate whose compile or run fails is dropped (drop_refused:
 * its kernel's, where the message names the kernel's node, else its round's) and the rest
 * of its round measured again, so the file never holds a refused value. --target T tunes
 * for another CPU target this machine runs (runs_here): tiled for T, JIT-compiled for T's
 * CPU and features. A candidate file is written next to -o (FILE.cand.tmp) and
 * removed at the end; -o itself is written through a temporary name, so a failure leaves
 * no partial file. */
#include "ir/kir.h"
#include "passes/pass.h"
#include "passes/schedule.h"
#include "passes/tuned.h"
#include "targets/target.h"
#include "tools/backend.h"
#include "tools/cli.h"
#include "tools/help.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { MAX_CAND = 12, NAME_CAP = 300, REASON_CAP = 160 };

static double wall_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static double thread_cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One kernel's tuning state. A candidate is a full record written to the file for that
 * kernel, or one "alone": only the field that changes the kernel's algorithm (wino, the
 * Winograd tile; split, an integer stem's words; span, tiles across the output rows) and
 * the split at one thread, the rest left to the passes, since the baseline's tile belongs
 * to the other algorithm. */
typedef struct ktune {
    char label[NAME_CAP];       /* "'name' Op", as schedule files write it */
    char needle[NAME_CAP + 16]; /* "node 'name' (Op)", as a diagnostic names the node */
    kn_sched base;
    /* what the kernel's contraction allows beyond its baseline: the Winograd tiles where
     * the passes chose the direct convolution, span tiles where its output rows are
     * narrower than the register tile (float windowed convolutions) */
    bool wino_ok, span_ok, group_ok;
    int mc; /* group_ok: the candidate's mc */
    /* a float pointwise convolution's or matrix product's register tile in vectors of the
     * target's full width: the vector registers for the half-width tiles (half_tiles), else
     * 0 */
    int half_regs;
    /* a Transpose's output columns (tblock), a Softmax row kernel's rows (smrows) */
    int64_t tcols, smrows;
    kn_sched cand[MAX_CAND];
    bool alone[MAX_CAND];
    int ncand;
    /* why candidate j was refused (a compile or run with it failed: the message), or "" */
    char why[MAX_CAND][REASON_CAP];
    double cand_us[MAX_CAND], cand_base_us[MAX_CAND]; /* medians in round j: cand j, base */
    bool measured[MAX_CAND];
    int best;                     /* index in cand of the fastest beating base, or -1 */
    double conf_base_us, conf_us; /* the confirmation round */
    bool kept;
} ktune;

/* The per-kernel hook: the run's time of each kernel, in ms. */
typedef struct tune_prof {
    int nk;
    bool cpu;
    double *start, *cur;
} tune_prof;

static void tune_hook(void *user, int k, int phase) {
    tune_prof *a = user;
    double t = a->cpu ? thread_cpu_ms() : wall_ms();
    if (k < 0 || k >= a->nk) return;
    if (phase == 0)
        a->start[k] = t;
    else
        a->cur[k] += t - a->start[k];
}

typedef struct tuner {
    kn_ctx *cx;
    const char *model, *backend, *out;
    const char *table_out; /* --table-out: the kept tiles as tuning-table entries, or NULL */
    char cand_path[4200];
    const cli_shapes *shapes;
    const kn_target *target; /* --target another than native (runs_here), or NULL */
    char cflags[96];         /* the C backend's: -march for the target */
    int threads, runs;
    bool list;     /* --list: every candidate measured, under its kernel's row */
    int inputs_rc; /* cli_inputs' exit code, when it failed (and printed why) */
    int nk;
    ktune *k;
    int nentries; /* written to table_out */
} tuner;

/* A field-by-field description of how candidate j of t differs from the baseline
 * ("tile_rows 4->5"), or "-". */
static void describe(const ktune *t, int j, char *buf, size_t cap) {
    const kn_sched *b = &t->base, *c = &t->cand[j];
    size_t n = 0;
    buf[0] = 0;
    for (int i = 0; i < kn_sched_nfields() && n < cap; i++) {
        int x = kn_sched_get(b, i), y = kn_sched_get(c, i);
        if (x == y || (!y && t->alone[j])) continue; /* left to the passes */
        n +=
            (size_t)snprintf(buf + n, cap - n, "%s%s %d->%d", n ? ", " : "", kn_sched_key(i), x, y);
    }
    if (!buf[0]) snprintf(buf, cap, "-");
}

static void write_record(FILE *f, int k, const char *label, const kn_sched *s) {
    fprintf(f, "kernel %d %s", k, label);
    kn_sched_print(f, s);
    fputc('\n', f);
}

/* A candidate beats the baseline when it takes at least MIN_GAIN less time: a kernel's
 * median moves by about 1% between rounds on an idle machine, so smaller "gains" would be
 * kept by chance as often as not. */
#define MIN_GAIN 0.01
static bool beats(double us, double base_us) {
    return us < base_us * (1 - MIN_GAIN);
}

static bool same(const kn_sched *a, const kn_sched *b) {
    return !memcmp(a, b, sizeof *a);
}

static void add_cand(ktune *t, kn_sched c, bool alone) {
    if (t->ncand == MAX_CAND || same(&c, &t->base)) return;
    for (int i = 0; i < t->ncand; i++)
        if (same(&c, &t->cand[i])) return;
    t->alone[t->ncand] = alone;
    t->cand[t->ncand++] = c;
}

/* split's legal alternatives (docs/internals.md, the field table) on the targets tune
 * runs (CPUs), by the value the passes recorded, which tells the kernel's kind: on a CPU
 * only an integer stem's pixel tiles record one, 5 (merged words of (input channel,
 * kernel column) values, on CPUs with a four-part dot: tile_stem_int and the channels-last
 * stem of passes/tile.c), and any other value keeps the channel tiles' words a tap, 1
 * written. The other values are microcontrollers' (s16x2 dot tiles, SMLAD depthwise row
 * words, Helium's depthwise tiles), whose code does not run here. Tried alone: the
 * channel tiles choose their own register tile. */
static const struct { int from, to; } split_alt[] = {{5, 1}};

/* The rows of a block of the GotoBLAS order tried (mc, passes/tile.c mm_groups): on the
 * Intel Xeon VM 192 rows (768 KB of A at K = 1024) in groups of 4 blocks measured 3-6%
 * faster than main's order on 512x1024x1024 in a quiet set, 1-4% slower under load
 * (docs/benchmarks.md, "The GotoBLAS order"), so it is a candidate, not the default. */
enum { TUNE_MC = 192 };

/* Sets t->wino_ok, group_ok and span_ok from kernel contraction d (or NULL) on target tg. Span
 * tiles (passes/tile.c, conv_span_rows) take an output plane whose rows are narrower than
 * the register tile (so the baseline's tiles are whole rows) in at most KN_SPAN_MAX_TILES
 * tiles of at most 16 rows; where the pass finds the tile rows make more, the candidate
 * compiles to the baseline and loses. */
static void allows(ktune *t, const kn_contract *d, const kn_target *tg) {
    const kn_sched *b = &t->base;
    bool fwin = d && d->kind == KN_CONTRACT_CONV && d->x->dtype == KN_F32 && d->group == 1 &&
                d->nsp == 2 && d->kh * d->kw > 1 && b->lanes > 1 && !b->dot;
    t->wino_ok = fwin && !b->wino && kn_winograd_suits(d, tg);
    /* mm_groups: blocks of mc rows over groups of blocks of columns (a float MatMul or
     * Gemm with a constant B; where M is under twice TUNE_MC, blocks of half the rows;
     * the pass rounds mc down to whole tiles and leaves B too small to group alone) */
    t->group_ok = d && d->kind == KN_CONTRACT_MATMUL && d->x->dtype == KN_F32 && d->batch <= 1 &&
                  b->tile_rows > 0 && b->lanes > 1 && !b->dot && !b->mc && d->M >= 2 * b->tile_rows;
    t->mc = d && d->M / 2 < TUNE_MC ? (int)(d->M / 2) : TUNE_MC;
    t->span_ok = fwin && !b->wino && b->tile_rows > 0 && d->ow <= b->tile_rows &&
                 d->oh * d->ow <= KN_SPAN_MAX_TILES * 16;
    /* half-width tiles: a float 1x1 convolution (pixel or channel tiles) or MatMul/Gemm
     * whose tile is in vectors of the target's full width, 8 lanes or more (kt_choose
     * takes a schedule file's narrower lanes) */
    bool pw = d && d->kind == KN_CONTRACT_CONV && d->group == 1 && d->kh * d->kw == 1;
    bool mm = d && d->kind == KN_CONTRACT_MATMUL;
    t->half_regs = (pw || mm) && d->x->dtype == KN_F32 && tg && tg->kind == KN_TARGET_CPU &&
                           b->lanes >= 8 && b->lanes % 2 == 0 && b->lanes == tg->vector_bits / 32 &&
                           b->tile_rows > 0 && b->tile_vecs > 0 && !b->dot && !b->wino &&
                           !b->split && !b->fblock
                       ? tg->vector_registers
                       : 0;
}

/* The rows of a half-width tile of nv vectors on `regs` vector registers, at most `rows`
 * (the baseline's): nv accumulators a row, nv weight vectors, and three spare for the
 * broadcasts, not kt_reg_rows' one: a 5 x 5 tile of 8 lanes (25 + 5 + 2 = 32 registers)
 * spilled an accumulator every step on Zen 4, where LLVM keeps two broadcasts live
 * (docs/benchmarks.md, "A tile cost model for the pointwise fp_split rules"); 4 x 5 did not.
 * 0: none fit. */
static int half_rows(int regs, int nv, int rows) {
    int fit = (regs - nv - 3) / nv;
    return fit < rows ? fit : rows;
}

/* Half-width candidates (t->half_regs): vectors of half the lanes, 2 nv - 1, 2 nv and
 * 2 nv + 1 of them (the same columns a block, and one half vector fewer or more: 40
 * channels, five vectors of 8, where the baseline's three of 16 leave 8 lanes empty),
 * up to KN_SCHED_MAX_VECS, each with the baseline's rows or fewer so that they fit
 * (half_rows), and the widest tile that keeps HALF_WIDE_ROWS rows (4 x 5 on 32
 * registers) where those do not reach it; the other fields as the baseline. The wide
 * one: from x86-64-avx512's 8 x 2 x 16 on Zen 4, 4 x 5 x 8 took 0.84-0.85 of the baseline
 * on EfficientNet-B0's 14x14 -> 80 projections, where pw_odd_cols' 8 x 1 x 16 (native's
 * baseline, whose 2 nv + 1 is 3) took 0.88-0.89 (docs/benchmarks.md, branch tn). On a target whose
 * vectors run on units of half their width (Zen 4: kn_target_fp_split) such tiles make as many
 * multiply-adds a cycle; passes/tile.c chooses them itself only in a few measured cases
 * (pw_channels_last, pw_odd_cols), and the tuner finds the others by measurement. */
enum { HALF_WIDE_ROWS = 4 };
static void half_tiles(ktune *t) {
    kn_sched b = t->base, c = b;
    int wide = 0;
    for (int nv = 1; t->half_regs && nv <= KN_SCHED_MAX_VECS; nv++)
        if (half_rows(t->half_regs, nv, HALF_WIDE_ROWS) == HALF_WIDE_ROWS) wide = nv;
    for (int nv = 2 * b.tile_vecs - 1; t->half_regs && nv <= 2 * b.tile_vecs + 1; nv++) {
        int rows = half_rows(t->half_regs, nv, b.tile_rows);
        if (nv < 1 || nv > KN_SCHED_MAX_VECS || rows < 1) continue;
        c.lanes = b.lanes / 2, c.tile_vecs = nv, c.tile_rows = rows;
        add_cand(t, c, false);
    }
    if (wide > 2 * b.tile_vecs + 1 && b.tile_rows >= HALF_WIDE_ROWS) {
        c.lanes = b.lanes / 2, c.tile_vecs = wide, c.tile_rows = HALF_WIDE_ROWS;
        add_cand(t, c, false);
    }
}

/* Sets t->tcols and t->smrows from the node of a Transpose or Softmax kernel whose record
 * has a block (kn_sched.tblock) or rows a step (smrows): passes/rows.c takes blocks that
 * divide the output's last axis into two or more, and 1 to KN_SOFTMAX_MAX_ROWS rows
 * dividing the rows. */
static void rows_allow(ktune *t, const kn_node *n) {
    if (!n) return;
    if (t->base.tblock && n->nout >= 1 && n->out[0] && n->out[0]->type.rank >= 1)
        t->tcols = n->out[0]->type.dims[n->out[0]->type.rank - 1];
    if (t->base.smrows && n->nin >= 1 && n->in[0] && n->in[0]->type.rank >= 1) {
        int64_t len = n->in[0]->type.dims[n->in[0]->type.rank - 1];
        t->smrows = len > 0 ? kn_type_numel(&n->in[0]->type) / len : 0;
    }
}

/* The candidates of kernel t from its baseline record: only values the schedule reader
 * accepts and the passes honour (tile_rows up to KN_SCHED_MAX_ROWS, float vector tiles
 * up to KN_SCHED_MAX_VECS vectors, integer and scalar ones KN_SCHED_MAX_NV). */
static void candidates(ktune *t, int threads) {
    kn_sched b = t->base, c;
    if (b.tile_rows && !b.wino) {
        c = b, c.tile_rows = b.tile_rows - 1;
        if (c.tile_rows >= 1) add_cand(t, c, false);
        c = b, c.tile_rows = b.tile_rows + 1;
        if (c.tile_rows <= KN_SCHED_MAX_ROWS) add_cand(t, c, false);
    }
    if (b.tile_vecs && !b.wino) {
        int cap = b.lanes > 1 && !b.dot ? KN_SCHED_MAX_VECS : KN_SCHED_MAX_NV;
        c = b, c.tile_vecs = b.tile_vecs - 1;
        if (c.tile_vecs >= 1) add_cand(t, c, false);
        c = b, c.tile_vecs = b.tile_vecs + 1;
        if (c.tile_vecs <= cap) add_cand(t, c, false);
    }
    half_tiles(t);
    if (threads > 1 && b.tasks) {
        c = b, c.tasks = b.tasks / 2 > 1 ? b.tasks / 2 : 1;
        add_cand(t, c, false);
        c = b, c.tasks = b.tasks * 2 <= 64 ? b.tasks * 2 : 64;
        add_cand(t, c, false);
    }
    if (b.wino || t->wino_ok) {
        static const int w[] = {1, 2, 4};
        for (int i = b.wino ? 0 : 1; i < 3; i++) {
            if (w[i] == b.wino) continue;
            memset(&c, 0, sizeof c);
            c.wino = w[i];
            c.tasks = threads > 1 ? 0 : b.tasks;
            add_cand(t, c, true);
        }
    }
    for (size_t i = 0; b.split && i < sizeof split_alt / sizeof *split_alt; i++) {
        if (split_alt[i].from != b.split) continue;
        memset(&c, 0, sizeof c);
        c.split = split_alt[i].to;
        c.tasks = threads > 1 ? 0 : b.tasks;
        add_cand(t, c, true);
    }
    if (b.pad >= 1 && b.pad <= 3) { /* the copy (2) against tests in the kernel (1); zeroed
                                      taps (3) against the copy */
        c = b, c.pad = b.pad == 2 ? 1 : 2;
        add_cand(t, c, false);
    }
    if (b.pf == 1 || b.pf == 2) {
        c = b, c.pf = 3 - b.pf;
        add_cand(t, c, false);
    }
    if (t->group_ok) {
        c = b, c.mc = t->mc;
        add_cand(t, c, false);
    }
    /* a Transpose's blocks (passes/rows.c): the plain nest, half and twice the block */
    static const int tb[] = {1, 8, 16, 32};
    for (size_t i = 0; b.tblock && i < sizeof tb / sizeof *tb; i++) {
        if (tb[i] > 1 && (t->tcols % tb[i] || t->tcols <= tb[i])) continue;
        c = b, c.tblock = tb[i];
        add_cand(t, c, false);
    }
    /* a Softmax row kernel's rows a step */
    for (int r = 1; b.smrows && r <= KN_SOFTMAX_MAX_ROWS; r *= 2) {
        if (t->smrows % r) continue;
        c = b, c.smrows = r;
        add_cand(t, c, false);
    }
    if (b.span || t->span_ok) { /* the other tiling of the plane: tried alone, as wino */
        memset(&c, 0, sizeof c);
        c.span = b.span == 1 ? 2 : 1;
        c.tasks = threads > 1 ? 0 : b.tasks;
        add_cand(t, c, true);
    }
}

/* Writes the candidate file: for each kernel pick[k] >= 0 its candidate pick[k], -1
 * nothing (the passes choose, as for the baseline). */
static kn_status write_cand(tuner *T, const int *pick) {
    FILE *f = fopen(T->cand_path, "w");
    if (!f) return kn_diag(T->cx, NULL, KN_EIO, "cannot write '%s'", T->out);
    fprintf(f, "# kiln tune candidate of '%s'\n", T->model);
    for (int k = 0; k < T->nk; k++) {
        if (pick[k] >= 0) write_record(f, k, T->k[k].label, &T->k[k].cand[pick[k]]);
    }
    if (fclose(f) != 0) return kn_diag(T->cx, NULL, KN_EIO, "cannot write '%s'", T->out);
    return KN_OK;
}

/* Writes the result to T->out through a temporary name: each kernel's schedule as the
 * final compile used it (as --dump-schedule writes it), and, where the kept change is a
 * candidate alone, the value it sets of a field the compiled record leaves 0: wino=1 of
 * the direct convolution, split=1 of an integer stem's channel words, span=2 of tiles of
 * one output row. The compiled record has no Winograd tile, merged words or span tiles
 * then, and without the value a reader of the file would let the passes choose again. */
static kn_status write_result(tuner *T, const kn_kprog *p, const int *pick) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", T->out);
    FILE *f = fopen(tmp, "w");
    if (!f) return kn_diag(T->cx, NULL, KN_EIO, "cannot write '%s'", T->out);
    fprintf(f, "# kiln schedule of '%s' for target %s: kernel INDEX 'NODE' OP field=value...\n",
            p->name, p->target ? p->target->name : "generic");
    fprintf(f, "# kiln tune: %s, backend %s, %d thread%s\n", T->model, T->backend, T->threads,
            T->threads == 1 ? "" : "s");
    for (int k = 0; k < p->nkernels && k < T->nk; k++) {
        kn_sched s = p->kernels[k]->sched;
        for (int i = 0; pick[k] >= 0 && T->k[k].alone[pick[k]] && i < kn_sched_nfields(); i++) {
            int v = kn_sched_get(&T->k[k].cand[pick[k]], i);
            const char *key = kn_sched_key(i);
            bool algo = !strcmp(key, "wino") || !strcmp(key, "split") || !strcmp(key, "span");
            if (algo && v && !kn_sched_get(&s, i)) kn_sched_set(&s, i, v);
        }
        write_record(f, k, T->k[k].label, &s);
    }
    if (fclose(f) != 0 || rename(tmp, T->out) != 0) {
        remove(tmp);
        return kn_diag(T->cx, NULL, KN_EIO, "cannot write '%s'", T->out);
    }
    return KN_OK;
}

/* Writes the kept changes of a register-tile field (kn_tuned_field) to T->table_out as
 * tuning-table entries (passes/tuned.c) through a temporary name: this machine's CPU (the
 * target's), the kernel's workload key as pass 'tuned' recorded it, and the tile fields of
 * its record as the final compile used them (and a kept span alone, which the record of
 * rows leaves 0). Kernels without a key (not tiled by pass 'tile', or 'tuned' left out of
 * the pipeline) and changes of other fields only (tasks: per thread count; wino, split:
 * another pass's or the integer words') have no entry. */
static kn_status write_table(tuner *T, const kn_kprog *p, const int *pick, int *nentries) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", T->table_out);
    FILE *f = fopen(tmp, "w");
    if (!f) return kn_diag(T->cx, NULL, KN_EIO, "cannot write '%s'", T->table_out);
    fprintf(f, "# kiln tune --table-out: %s, backend %s, %d thread%s, target %s\n", T->model,
            T->backend, T->threads, T->threads == 1 ? "" : "s",
            p->target ? p->target->name : "generic");
    *nentries = 0;
    for (int k = 0; k < p->nkernels && k < T->nk; k++) {
        const ktune *t = &T->k[k];
        const kn_kernel *kern = p->kernels[k];
        if (pick[k] < 0 || !t->kept || !kern->workload) continue;
        bool tile = false;
        kn_sched s = {0};
        for (int i = 0; i < kn_sched_nfields(); i++) {
            if (!kn_tuned_field(i)) continue;
            int c = kn_sched_get(&t->cand[pick[k]], i);
            tile |= c && c != kn_sched_get(&t->base, i);
            kn_sched_set(&s, i, kn_sched_get(&kern->sched, i));
            /* a kept span=2 (rows) alone: the compiled record of rows has no span, as in
             * write_result */
            if (t->alone[pick[k]] && c && !kn_sched_get(&s, i)) kn_sched_set(&s, i, c);
        }
        if (!tile) continue;
        fprintf(f, "# kernel %d %s\n", k, t->label);
        kn_tuned_print(f, kn_target_cpu_name(p->target), kern->workload, &s);
        ++*nentries;
    }
    if (fclose(f) != 0 || rename(tmp, T->table_out) != 0) {
        remove(tmp);
        return kn_diag(T->cx, NULL, KN_EIO, "cannot write '%s'", T->table_out);
    }
    return KN_OK;
}

/* A compiled model with its graph and inputs. */
typedef struct tprog {
    kn_graph *g;
    kn_arena *a;
    kn_tensor **in;
    backend_prog *bp;
} tprog;

static void tprog_release(tprog *p) {
    backend_release(p->bp);
    if (p->a) kn_arena_destroy(p->a);
    if (p->g) kn_graph_destroy(p->g);
    memset(p, 0, sizeof *p);
}

/* The test hook KILN_TUNE_REFUSE=OP:FIELD[,OP:FIELD...] (OP * for every op): a compile
 * with a schedule file fails where a kernel of op OP whose baseline sets FIELD was compiled
 * with another value of it, as a pass refusing that value would: with a message naming the
 * kernel's node (OP *: naming no node). tests/cli/tune_refuse.sh drives the search's handling of
 * refused candidates with it; no pass refuses a value the candidates hold today. */
static kn_status refuse_hook(tuner *T, const kn_kprog *p) {
    const char *e = getenv("KILN_TUNE_REFUSE");
    for (const char *spec = e; spec && *spec && T->nk;
         spec += strcspn(spec, ","), spec += !!*spec) {
        size_t len = strcspn(spec, ","), oplen = strcspn(spec, ":");
        if (oplen >= len) continue;
        bool any = oplen == 1 && spec[0] == '*';
        for (int i = 0; i < kn_sched_nfields(); i++) {
            const char *key = kn_sched_key(i);
            if (strlen(key) != len - oplen - 1 || strncmp(key, spec + oplen + 1, strlen(key)))
                continue;
            for (int k = 0; k < p->nkernels && k < T->nk; k++) {
                const kn_node *n = p->kernels[k]->node;
                int v = kn_sched_get(&p->kernels[k]->sched, i), b = kn_sched_get(&T->k[k].base, i);
                if (!n || !b || v == b ||
                    (!any && (strlen(n->op_type) != oplen || strncmp(n->op_type, spec, oplen))))
                    continue;
                return kn_diag(T->cx, any ? NULL : n, KN_EINVAL,
                               "%s=%d refused (test hook KILN_TUNE_REFUSE=%s)", key, v, e);
            }
        }
    }
    return KN_OK;
}

/* The test hook KILN_TUNE_FAVOUR=FIELD: a candidate that changes FIELD counts as taking no
 * time, in its round and in the confirmation, so that it wins wherever it is tried, however
 * loaded the machine (at half its time, a candidate measured over twice the baseline's lost:
 * cli_tune_split failed once beside a CI run): tests/cli/tune_split.sh checks the file
 * written for a kept change of split with it, which timing alone would keep only on some
 * machines. */
static double favour(const ktune *t, int j, double us) {
    const char *e = getenv("KILN_TUNE_FAVOUR");
    for (int i = 0; e && *e && i < kn_sched_nfields(); i++) {
        int v = kn_sched_get(&t->cand[j], i);
        if (!strcmp(kn_sched_key(i), e) && v != kn_sched_get(&t->base, i) && (v || !t->alone[j]))
            return 0; /* a candidate alone changes only the fields it sets (describe) */
    }
    return us;
}

/* Loads and compiles the model with schedule file sched (NULL: the passes' own); prof (may
 * be NULL) times each kernel. */
static kn_status tprog_build(tuner *T, const char *sched, const kn_profile *prof, tprog *p) {
    memset(p, 0, sizeof *p);
    kn_ctx *cx = T->cx;
    if (cli_load(cx, T->model, T->shapes, &p->g)) return cx->status;
    p->a = kn_arena_create();
    p->in = kn_arena_array(p->a, (size_t)p->g->nin + 1, sizeof *p->in);
    if ((T->inputs_rc = cli_inputs("tune", T->model, p->g, p->a, NULL, 0, true, 0, p->in))) {
        tprog_release(p); /* cli_inputs printed why (a symbolic dimension: --dim) */
        return KN_EINVAL;
    }
    cli_pipeline po = {0};
    kn_compile_opts copts;
    cli_compile_opts(&po, &copts);
    copts.schedule_file = sched;
    if (backend_prepare_for(cx, T->backend, p->g, p->in, T->cflags, T->threads, &copts, prof,
                            T->target, &p->bp) ||
        (sched && refuse_hook(T, backend_kprog(p->bp)))) {
        tprog_release(p);
        return cx->status;
    }
    backend_reuse_outputs(p->bp);
    return KN_OK;
}

static kn_status run_once(tuner *T, tprog *p) {
    kn_arena *a = kn_arena_create();
    kn_tensor **out = kn_arena_array(a, (size_t)p->g->nout + 1, sizeof *out);
    kn_status st = backend_call(T->cx, p->bp, a, p->in, out, 0);
    kn_arena_destroy(a);
    return st;
}

/* A program compiled with a timing hook around each kernel, and each kernel's time in
 * every timed run. */
typedef struct meas {
    tprog p;
    tune_prof acc;
    kn_profile prof;
    double *t; /* ms: kernel k's time in timed run r at t[k * runs + r] */
} meas;

static void meas_release(meas *m) {
    tprog_release(&m->p);
    free(m->acc.start);
    free(m->acc.cur);
    free(m->t);
    memset(m, 0, sizeof *m);
}

/* Compiles with schedule file sched (NULL: the passes' own). m must not move while it
 * lives (the hook points into it). With T->nk still 0 (the baseline), records each
 * kernel's label and schedule and sets T->nk. */
static kn_status meas_build(tuner *T, const char *sched, meas *m) {
    memset(m, 0, sizeof *m);
    m->acc.cpu = T->threads == 1;
    m->prof = (kn_profile){tune_hook, &m->acc};
    kn_status st = tprog_build(T, sched, &m->prof, &m->p);
    if (st) return st;
    const kn_kprog *kp = backend_kprog(m->p.bp);
    int nk = kp->nkernels;
    if (!T->nk) {
        T->nk = nk;
        T->k = calloc((size_t)nk + 1, sizeof *T->k);
        KN_ASSERT(T->k);
        for (int k = 0; k < nk; k++) {
            const kn_kernel *kern = kp->kernels[k];
            if (kern->node) {
                snprintf(T->k[k].label, NAME_CAP, "'%s' %s", kern->node->name, kern->node->op_type);
                snprintf(T->k[k].needle, sizeof T->k[k].needle, "node '%s' (%s)",
                         kern->node->name && kern->node->name[0] ? kern->node->name : "<unnamed>",
                         kern->node->op_type);
            } else {
                snprintf(T->k[k].label, NAME_CAP, "'' -");
            }
            T->k[k].base = kern->sched;
            T->k[k].best = -1;
            allows(&T->k[k], kern->contract, kp->target);
            rows_allow(&T->k[k], kern->node);
        }
    }
    KN_ASSERT(nk == T->nk); /* the kernels are fixed at lowering (kn_schedule_check) */
    m->acc.start = calloc((size_t)nk + 1, sizeof *m->acc.start);
    m->acc.cur = calloc((size_t)nk + 1, sizeof *m->acc.cur);
    m->t = calloc((size_t)nk * (size_t)T->runs + 1, sizeof *m->t);
    KN_ASSERT(m->acc.start && m->acc.cur && m->t);
    m->acc.nk = nk;
    return KN_OK;
}

/* Run r (< 0: untimed) of m. */
static kn_status meas_run(tuner *T, meas *m, int r) {
    memset(m->acc.cur, 0, (size_t)T->nk * sizeof *m->acc.cur);
    kn_status st = run_once(T, &m->p);
    for (int k = 0; !st && r >= 0 && k < T->nk; k++)
        m->t[(size_t)k * (size_t)T->runs + (size_t)r] = m->acc.cur[k];
    return st;
}

/* Times the baseline b and the program built from sched side by side: one untimed run
 * each, then --runs timed runs each, interleaved (b c, c b, ...), so that drift in the
 * machine's speed falls on both. Sets base_us[k] and us[k] to the medians in us. On a
 * failure, *theirs says whether it was the candidate's (its compile or one of its runs)
 * rather than the baseline's. */
static kn_status round_measure(tuner *T, meas *b, const char *sched, double *base_us, double *us,
                               bool *theirs) {
    meas c;
    *theirs = true;
    kn_status st = meas_build(T, sched, &c);
    if (st) {
        meas_release(&c);
        return st;
    }
    for (int r = -1; r < T->runs && !st; r++) {
        bool b_first = r % 2 == 0;
        *theirs = !b_first;
        st = meas_run(T, b_first ? b : &c, r);
        if (!st) *theirs = b_first, st = meas_run(T, b_first ? &c : b, r);
    }
    for (int k = 0; !st && k < T->nk; k++) {
        base_us[k] = 1e3 * median(b->t + (size_t)k * (size_t)T->runs, T->runs);
        us[k] = 1e3 * median(c.t + (size_t)k * (size_t)T->runs, T->runs);
    }
    meas_release(&c);
    return st;
}

/* The message of the failure in T->cx, without its "FILE: " prefix, into buf; clears
 * the failure from the context, so that the search goes on. */
static void take_failure(tuner *T, char *buf, size_t cap) {
    const char *m = T->cx->msg, *file = T->cx->file;
    size_t fl = file ? strlen(file) : 0;
    if (fl && !strncmp(m, file, fl) && !strncmp(m + fl, ": ", 2)) m += fl + 2;
    snprintf(buf, cap, "%s", m);
    T->cx->status = KN_OK;
    T->cx->msg[0] = 0;
}

static bool names(const ktune *t, const char *msg) {
    return t->needle[0] && strstr(msg, t->needle);
}

/* Drops the candidates in pick that failure message msg refuses: those of the kernels
 * whose node it names, or, when it names none of them, every candidate in pick (the
 * round's: which one failed is not known). Each gets pick[k] = -1 and the message, after
 * stage, as the reason. */
static void drop_refused(tuner *T, int *pick, const char *msg, const char *stage) {
    bool named = false;
    for (int k = 0; k < T->nk; k++) named |= pick[k] >= 0 && names(&T->k[k], msg);
    for (int k = 0; k < T->nk; k++) {
        ktune *t = &T->k[k];
        if (pick[k] < 0 || (named && !names(t, msg))) continue;
        snprintf(t->why[pick[k]], REASON_CAP, "%s%s: %s", stage, named ? "" : ", the whole round",
                 msg);
        pick[k] = -1;
    }
}

/* round_measure of the candidates in pick (write_cand), surviving refused ones: where
 * the candidate program fails to compile or to run, drop_refused drops the candidates the
 * message names (or the round's) and what is left is measured again. *ran is false when
 * nothing was left. A failure of the baseline, or in writing the candidate file, ends
 * the search. */
static kn_status round_survive(tuner *T, meas *b, int *pick, const char *stage, double *base_us,
                               double *us, bool *ran) {
    for (;;) {
        bool any = false, theirs = false;
        for (int k = 0; k < T->nk; k++) any |= pick[k] >= 0;
        *ran = false;
        if (!any) return KN_OK;
        kn_status st = write_cand(T, pick);
        if (st) return st;
        if (!(st = round_measure(T, b, T->cand_path, base_us, us, &theirs))) {
            *ran = true;
            return KN_OK;
        }
        if (!theirs) return st;
        char msg[sizeof T->cx->msg];
        take_failure(T, msg, sizeof msg);
        drop_refused(T, pick, msg, stage);
    }
}

/* The whole model, default against the file at path, interleaved run by run (the order
 * alternating: AB, BA, ...): medians of 2 x --runs (at least 10) runs each, in ms of the calling
 * thread's CPU time at one thread (what other load on the machine does not change), wall
 * time with more. */
static kn_status whole_model(tuner *T, const char *path, double *before, double *after) {
    tprog a, b;
    kn_status st = tprog_build(T, NULL, NULL, &a);
    if (st) return st;
    if ((st = tprog_build(T, path, NULL, &b))) {
        tprog_release(&a);
        return st;
    }
    double (*now)(void) = T->threads == 1 ? thread_cpu_ms : wall_ms;
    int n = 2 * T->runs < 10 ? 10 : 2 * T->runs;
    double *ta = calloc((size_t)n, sizeof *ta), *tb = calloc((size_t)n, sizeof *tb);
    KN_ASSERT(ta && tb);
    st = run_once(T, &a);
    if (!st) st = run_once(T, &b);
    for (int r = 0; r < n && !st; r++) {
        for (int h = 0; h < 2 && !st; h++) { /* even r: a then b; odd r: b then a */
            bool is_a = (r % 2 == 0) == (h == 0);
            double t0 = now();
            st = run_once(T, is_a ? &a : &b);
            (is_a ? ta : tb)[r] = now() - t0;
        }
    }
    if (!st) {
        *before = median(ta, n);
        *after = median(tb, n);
    }
    free(ta);
    free(tb);
    tprog_release(&a);
    tprog_release(&b);
    return st;
}

/* Whether this machine runs code for CPU target t (another than native), else why not in
 * why: the same architecture (t's triple, or none) and every feature t names one this
 * CPU has. */
static bool runs_here(const kn_target *t, char *why, size_t cap) {
    if (t->kind != KN_TARGET_CPU || t->embedded) {
        snprintf(why, cap, "it is not a hosted CPU");
        return false;
    }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if (t->triple && strncmp(t->triple, "x86_64", 6)) {
        snprintf(why, cap, "its architecture (%s) is not this machine's", t->triple);
        return false;
    }
    __builtin_cpu_init();
    const struct {
        const char *name;
        bool has;
    } cpu[] = {
        {"avx2", __builtin_cpu_supports("avx2")},
        {"fma", __builtin_cpu_supports("fma")},
        {"f16c", true}, /* every CPU with AVX2 or FMA has it */
        {"avx512f", __builtin_cpu_supports("avx512f")},
        {"avx512bw", __builtin_cpu_supports("avx512bw")},
        {"avx512vl", __builtin_cpu_supports("avx512vl")},
        {"avx512dq", __builtin_cpu_supports("avx512dq")},
        {"avx512vnni", __builtin_cpu_supports("avx512vnni")},
    };
    for (const char *f = t->features ? t->features : ""; *f; f += strcspn(f, ","), f += !!*f) {
        size_t len = strcspn(f, ",");
        bool known = false, has = false;
        for (size_t i = 0; f[0] == '+' && i < sizeof cpu / sizeof *cpu; i++)
            if (strlen(cpu[i].name) == len - 1 && !strncmp(cpu[i].name, f + 1, len - 1))
                known = true, has = cpu[i].has;
        if (!known || !has) {
            snprintf(why, cap, "this CPU %s its feature %.*s",
                     known ? "lacks" : "is not known to have", (int)len, f);
            return false;
        }
    }
    return true;
#else
    snprintf(why, cap, "only x86-64 hosts tune for a target other than native");
    return false;
#endif
}

static bool parse_count(const char *s, int lo, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || !*s || v < lo || v > 1000000) return false;
    *out = (int)v;
    return true;
}

/* The search; on success the file is at T->out. */
static kn_status tune(tuner *T, double budget_s) {
    double t0 = wall_ms();
    double *us = NULL;
    int *pick = NULL;
    /* the baseline, which also gives the kernels and their schedules; it stays compiled
     * and runs beside every round */
    meas base;
    kn_status st = meas_build(T, NULL, &base);
    if (st) {
        meas_release(&base);
        return st;
    }
    int nk = T->nk, rounds = 0;
    us = calloc((size_t)nk + 1, sizeof *us);
    double *bus = calloc((size_t)nk + 1, sizeof *bus);
    pick = calloc((size_t)nk + 1, sizeof *pick);
    KN_ASSERT(us && bus && pick);
    for (int k = 0; k < nk; k++) {
        candidates(&T->k[k], T->threads);
        if (T->k[k].ncand > rounds) rounds = T->k[k].ncand;
    }
    int done = 0;
    bool ran = false;
    for (int j = 0; j < rounds && !st; j++) {
        if (budget_s > 0 && (wall_ms() - t0) * 1e-3 > budget_s) break;
        for (int k = 0; k < nk; k++) pick[k] = j < T->k[k].ncand ? j : -1;
        char stage[32];
        snprintf(stage, sizeof stage, "round %d", j + 1);
        if ((st = round_survive(T, &base, pick, stage, bus, us, &ran))) break;
        done += ran;
        for (int k = 0; ran && k < nk; k++) {
            ktune *t = &T->k[k];
            if (pick[k] != j) continue; /* no candidate j, or refused */
            t->measured[j] = true;
            t->cand_us[j] = favour(t, j, us[k]);
            t->cand_base_us[j] = bus[k];
            if (beats(t->cand_us[j], bus[k]) &&
                (t->best < 0 ||
                 t->cand_us[j] / bus[k] < t->cand_us[t->best] / t->cand_base_us[t->best]))
                t->best = j;
        }
    }
    /* confirmation: the winners together, beside the baseline again */
    bool any = false;
    for (int k = 0; !st && k < nk; k++) {
        pick[k] = T->k[k].best;
        any |= pick[k] >= 0;
    }
    ran = false;
    if (!st && any) st = round_survive(T, &base, pick, "confirmation", bus, us, &ran);
    for (int k = 0; !st && ran && k < nk; k++) {
        ktune *t = &T->k[k];
        if (pick[k] < 0) continue; /* no winner, or refused beside the others */
        t->conf_base_us = bus[k];
        t->conf_us = favour(t, pick[k], us[k]);
        t->kept = beats(t->conf_us, bus[k]);
    }
    meas_release(&base);
    free(bus);
    /* the result: kept changes, every other kernel as the passes choose; a change refused
     * here is dropped as in the rounds (with none left, this is the baseline, which
     * compiled) */
    for (int k = 0; !st && k < nk; k++) pick[k] = T->k[k].kept ? T->k[k].best : -1;
    while (!st && !(st = write_cand(T, pick))) {
        tprog fin;
        if (!(st = tprog_build(T, T->cand_path, NULL, &fin))) {
            st = write_result(T, backend_kprog(fin.bp), pick);
            if (!st && T->table_out) st = write_table(T, backend_kprog(fin.bp), pick, &T->nentries);
            tprog_release(&fin);
            break;
        }
        bool left = false;
        for (int k = 0; k < nk; k++) left |= pick[k] >= 0;
        if (!left || T->inputs_rc) break;
        char msg[sizeof T->cx->msg];
        take_failure(T, msg, sizeof msg);
        drop_refused(T, pick, msg, "final compile");
        for (int k = 0; k < nk; k++) T->k[k].kept &= pick[k] >= 0;
        st = KN_OK;
    }
    remove(T->cand_path);
    if (st) {
        free(us);
        free(pick);
        return st;
    }
    double before = 0, after = 0;
    st = whole_model(T, T->out, &before, &after);
    cli_progress_end();
    if (!st) {
        printf("%s: backend %s, %d thread%s, %d runs a round (%s time), %d of %d candidate "
               "rounds in %.1f s\n",
               T->model, T->backend, T->threads, T->threads == 1 ? "" : "s", T->runs,
               T->threads == 1 ? "thread CPU" : "wall", done, rounds, (wall_ms() - t0) * 1e-3);
        printf("  %6s %-36s %9s %9s %17s  %s\n", "kernel", "node", "base us", "best us",
               "confirm base/best", "fields changed");
        int kept = 0, refused = 0;
        for (int k = 0; k < nk; k++) {
            ktune *t = &T->k[k];
            if (!t->ncand) continue;
            char what[200], conf[64] = "", base_s[32] = "-", best_s[32] = "-";
            bool win_refused = t->best >= 0 && t->why[t->best][0];
            if (t->best >= 0 && !win_refused) {
                describe(t, t->best, what, sizeof what);
                snprintf(conf, sizeof conf, "%.1f/%.1f", t->conf_base_us, t->conf_us);
            }
            if (t->kept)
                kept++;
            else
                snprintf(what, sizeof what,
                         win_refused    ? "- (refused after winning its round)"
                         : t->best >= 0 ? "- (not confirmed)"
                                        : "-");
            int j = t->best; /* the winner's round, else the first measured one */
            for (int i = 0; j < 0 && i < t->ncand; i++)
                if (t->measured[i]) j = i;
            if (j >= 0 && t->measured[j]) {
                snprintf(base_s, sizeof base_s, "%.1f", t->cand_base_us[j]);
                snprintf(best_s, sizeof best_s, "%.1f",
                         t->best >= 0 ? t->cand_us[j] : t->cand_base_us[j]);
            }
            printf("  %6d %-36.36s %9s %9s %17s  %s\n", k, t->label, base_s, best_s, conf, what);
            for (int i = 0; T->list && i < t->ncand; i++) {
                if (!t->measured[i]) continue;
                describe(t, i, what, sizeof what);
                printf("  %6s round %d: %s: %.1f us, baseline %.1f us\n", "", i + 1, what,
                       t->cand_us[i], t->cand_base_us[i]);
            }
            for (int i = 0; i < t->ncand; i++) {
                if (!t->why[i][0]) continue;
                describe(t, i, what, sizeof what);
                printf("  %6s refused %s (%s)\n", "", what, t->why[i]);
                refused++;
            }
        }
        if (refused)
            printf("%d candidate%s refused: dropped, not written\n", refused,
                   refused == 1 ? "" : "s");
        int n = 2 * T->runs < 10 ? 10 : 2 * T->runs;
        printf("%d of %d kernels changed; whole model (median of %d runs each, interleaved, %s "
               "time): default %.3f ms, tuned %.3f ms (%.3fx)\n",
               kept, nk, n, T->threads == 1 ? "thread CPU" : "wall", before, after,
               after > 0 ? before / after : 0);
        printf("wrote %s\n", T->out);
        if (T->table_out)
            printf("wrote %s: %d tuning-table entr%s\n", T->table_out, T->nentries,
                   T->nentries == 1 ? "y" : "ies");
    } else {
        remove(T->out);
        if (T->table_out) remove(T->table_out);
    }
    free(us);
    free(pick);
    return st;
}

int cmd_tune(int argc, char **argv) {
    const char *model = NULL, *backend = "llvm", *out = NULL, *target = NULL, *v;
    const char *table_out = NULL;
    int threads = 1, runs = 5, budget = 0, err = 0;
    bool list = false;
    cli_shapes shapes = {0};
    cli_talk talk = {0};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            cli_help_command(stdout, cli_command_find("tune"));
            return EXIT_OK;
        } else if (cli_opt(argc, argv, &i, "-o", &v)) {
            out = v;
        } else if (cli_opt(argc, argv, &i, "--backend", &v)) {
            backend = v;
        } else if (cli_opt(argc, argv, &i, "--target", &v)) {
            target = v;
        } else if (cli_opt(argc, argv, &i, "--runs", &v)) {
            if (!parse_count(v, 1, &runs)) return cli_usage_error("tune", "--runs takes N >= 1");
        } else if (cli_opt(argc, argv, &i, "--threads", &v)) {
            if (!parse_count(v, 1, &threads))
                return cli_usage_error("tune", "--threads takes N >= 1");
        } else if (cli_opt(argc, argv, &i, "--budget", &v)) {
            if (!parse_count(v, 0, &budget))
                return cli_usage_error("tune", "--budget takes SECONDS >= 0");
        } else if (cli_opt(argc, argv, &i, "--table-out", &v)) {
            table_out = v;
        } else if (cli_flag(argv[i], "--list")) {
            list = true;
        } else if (cli_talk_opt(argv[i], &talk, false)) {
        } else if (cli_shape_opt(argc, argv, &i, &shapes, &err)) {
            if (err) return EXIT_USAGE;
        } else if (argv[i][0] == '-') {
            return cli_unknown_option("tune", argv[i]);
        } else if (!model) {
            model = argv[i];
        } else {
            return cli_usage_error("tune", "more than one model given");
        }
    }
    if (!model) return cli_usage_error("tune", "no model given");
    if (!out) return cli_usage_error("tune", "no output file given (-o FILE.sched)");
    if (strcmp(backend, "llvm") && strcmp(backend, "c"))
        return cli_usage_error("tune",
                               "--backend takes llvm or c, the backends that run "
                               "kernels timed on this machine, not '%s'",
                               backend);
    if (!strcmp(backend, "c")) threads = 1;
    /* the measurements are of this machine: another target only where it runs here, with
     * the host's triple (the code is JIT-compiled for T's CPU and features) */
    static kn_target run_target;
    const kn_target *tgt = NULL;
    if (target) {
        const kn_target *t = kn_target_find(target);
        char why[160];
        if (!t)
            return cli_usage_error("tune", "unknown target '%s' (%s)", target, cli_target_names());
        if (kn_target_resolve(t) != kn_target_resolve(kn_target_find("native"))) {
            if (!runs_here(t, why, sizeof why))
                return cli_usage_error("tune",
                                       "--target %s: tune measures on this machine, which "
                                       "cannot run it: %s",
                                       target, why);
            run_target = *t;
            run_target.triple = NULL;
            tgt = &run_target;
        }
    }
    if (strlen(out) > 4000) return cli_usage_error("tune", "-o: path too long");
    if (table_out && strlen(table_out) > 4000)
        return cli_usage_error("tune", "--table-out: path too long");

    kn_ctx cx;
    cli_ctx_init(&cx, model, &talk);
    tuner T = {.cx = &cx,
               .model = model,
               .backend = backend,
               .out = out,
               .table_out = table_out,
               .shapes = &shapes,
               .target = tgt,
               .threads = threads,
               .runs = runs,
               .list = list};
    snprintf(T.cflags, sizeof T.cflags, "-O3 -march=%s",
             !tgt                          ? "native"
             : strcmp(tgt->cpu, "generic") ? tgt->cpu
                                           : "x86-64");
    snprintf(T.cand_path, sizeof T.cand_path, "%s.cand.tmp", out);
    /* -o writable before any work (a candidate file goes beside it) */
    FILE *f = fopen(T.cand_path, "w");
    if (!f) {
        fprintf(stderr, "kiln: cannot write '%s'\n", out);
        return EXIT_BAD_INPUT;
    }
    fclose(f);
    remove(T.cand_path);
    kn_status st = tune(&T, budget);
    remove(T.cand_path);
    free(T.k);
    if (st) return T.inputs_rc ? T.inputs_rc : cli_fail(&cx);
    return EXIT_OK;
}
