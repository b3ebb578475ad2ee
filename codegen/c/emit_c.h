/* The C emitter: prints a planned kernel IR program as standalone C99.
 *
 * Output contract (docs/generated-c.md): NAME.h defines NAME_ARENA_SIZE,
 * NAME_ARENA_ALIGN, each input's and output's name, rank, dims and element count,
 * and declares `int NAME_run(<const T *input>..., <T *output>..., void *arena)`
 * returning 0 (with --weights-file, a `const void *weights` parameter comes before
 * the arena). NAME.c includes only <stdint.h>, <stddef.h>, <string.h> and <math.h>,
 * calls no allocator, writes no global or static variable, and keeps weights in
 * `static const` arrays. Output is deterministic: the same program prints the same
 * bytes. The emitter makes no optimization decisions. */
#ifndef KN_EMIT_C_H
#define KN_EMIT_C_H

#include "ir/kir.h"

#include <stdio.h>

typedef struct kn_c_options {
    const char *weights_section; /* place weights in this linker section, or NULL */
    bool weights_file;           /* weights in NAME.weights, passed at run time */
    bool header_only;            /* kn_emit_c_files: NAME.h only (for --emit obj|asm|llvm) */
    bool reverse_parallel;       /* test mode: run parallel loops backwards (checks the
                                    parallel-loop analysis: results must not change) */
    int threads;                 /* > 1: NAME_run_parallel too, which runs the parallel loops
                                    as tasks through a caller's par_for on up to this many
                                    threads (the program compiled for as many: its
                                    per-thread scratch copies, kn_kprog.threads) */
    bool profile;                /* kiln bench --profile: NAME.c defines the globals
                                    `void (*NAME_profile_hook)(void *, int, int)` and
                                    `void *NAME_profile_user`, and NAME_run calls the hook
                                    around each kernel when it is set (codegen/profile.h).
                                    Not for firmware: the globals are mutable. */
} kn_c_options;

/* Writes NAME.h and NAME.c (and NAME.weights) to the given streams; c may be NULL
 * (header only); weights may be NULL unless opt->weights_file. */
kn_status kn_emit_c(kn_ctx *cx, const kn_kprog *p, const kn_c_options *opt, FILE *h, FILE *c,
                    FILE *weights);
/* Header lines for the sequence/optional inputs and outputs (NAME_X_LENGTH,
 * NAME_X_PRESENT, NAME_X_FIRST_INPUT/OUTPUT; see docs/generated-c.md). */
void kn_emit_c_groups(FILE *h, const kn_kprog *p);
/* The kernels of p that which[k] marks, for host code that runs them outside NAME_run
 * (the OpenCL backend's host kernels, codegen/opencl): includes, helpers, each kernel
 * as printed for NAME.c, and for each a wrapper
 *   void NAME_hK(void *arena, const void *weights, void *const *io)
 * (`static` unless exported) that calls it with its buffers at their planned arena
 * offsets, its weights at their kn_kprog_weight_layout offsets in `weights`, graph
 * input i at io[i], output j at io[nin + j] and the status word at io[nin + nout]. */
void kn_emit_c_host_kernels(kn_ctx *cx, const kn_kprog *p, const unsigned char *which,
                            bool exported, FILE *c);
/* Writes the files into dir through temporary names renamed on success. */
kn_status kn_emit_c_files(kn_ctx *cx, const kn_kprog *p, const kn_c_options *opt, const char *dir);

#endif
