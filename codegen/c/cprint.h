/* The C-family printer of kernel IR: statements and expressions as C99 or OpenCL C.
 * The C emitter and the OpenCL emitter lay out their files differently but print
 * kernel bodies through this one printer; a dialect changes type names, math
 * function names, half-precision access and element copies, nothing else.
 *
 * Vectors (kernel-IR lanes > 1) are printed as C arrays: a vector local is `float
 * v5[16]`, and a statement with a vector value becomes a loop over the lanes
 * `for (int kn_l = 0; kn_l < 16; kn_l++)` whose body reads lane kn_l of every vector
 * operand. Compilers turn these loops into SIMD code where the target has it.
 *
 * With vec_ext, f32 vectors of a power-of-two width are printed with GCC/Clang vector
 * extensions (C99) or OpenCL C's floatN (up to 16 lanes) instead: the local is a
 * `kn_v16f`, and a statement whose value is arithmetic, fma, min/max, abs, or a select
 * on a comparison becomes one vector statement through the KN_* macros that
 * kn_cprint_vector_prelude (C99) or kn_cprint_ocl_vectors (OpenCL) defines (C99: loads
 * and stores through unaligned may_alias types, fma per lane through KN_FMAF);
 * other vector statements keep the lane loop, which indexes the vector local. Both
 * forms compute the same operations in the same order per lane, so they give
 * identical results. Scalar f32/f64 fma is printed as KN_FMAF / KN_FMAD (fused only
 * where the target and the C compiler have it; see the prelude). */
#ifndef KN_CPRINT_H
#define KN_CPRINT_H

#include "ir/kir.h"

#include <stdio.h>

typedef enum kn_dialect { KN_C99, KN_OPENCL } kn_dialect;

typedef struct kn_cprint {
    const kn_kprog *p;
    FILE *f;
    kn_dialect dialect;
    bool reverse_parallel; /* test mode: parallel loops run backwards */
    /* NULL, or called on each loop before it is printed: prints the loop some other way
     * (emit_c.c: a parallel loop as a call of its task function) and returns true, or
     * returns false to have it printed as a loop */
    bool (*loop_hook)(struct kn_cprint *P, const kn_ks *s, int indent);
    void *hook_user;
    const kn_ks *gid[3]; /* OpenCL: loops that are NDRange dims 0..2 */
    int ngid;
    bool in_lane;                      /* printing one lane (kn_l) of a vector statement */
    unsigned helpers;                  /* half-precision helpers used */
    unsigned char types[KN_DTYPE_MAX]; /* per dtype: min/max/abs/div/rem/shift helpers used */
    bool vec_ext;                      /* vector statements as vector types (C99: GCC/Clang
                                          extensions; OpenCL: floatN up to 16) */
    unsigned vec_widths;               /* bit k: the f32 vector type of 2^k lanes is used */
    bool fma_used;                     /* KN_FMAF or KN_FMAD printed */
    bool self_used;                    /* KN_SELF printed */
    bool mve_int;                      /* i32 vectors of 4 lanes as kn_v4i, their loads and
                                          multiply-adds as KN_LD4I, KN_LD4S16, KN_MLA4I (Helium
                                          intrinsics; vec_ext) */
    bool mve_used;                     /* one of those printed */
    bool gather4f;                     /* KN_LD4FG printed (mve_int's strided f32 loads) */
    unsigned blk_widths;               /* bit k: a register block of 2^k floats printed
                                          (KN_LDM<2^k>F; C99, kl_decl_block) */
    int blk_var[64];                   /* the locals of the last 64 register blocks printed
                                          (each is read right after it is declared) */
    int nblk;
    int ntemps;             /* temporaries printed so far (kn_tN names) */
    int nmap;               /* vector statement being printed: operands held */
    const kn_kx *map_x[32]; /* in temporaries map_x[i] -> kn_t<map_t[i]> */
    int map_t[32];
    int depth;            /* kn_cprint_stmt calls in progress */
    int rq_depth;         /* depth of the statements of the block whose cache rq_x is */
    int nrq, rq_next;     /* mve_int: table vectors of KN_RQ4IV loaded once a block: */
    const kn_kx *rq_x[6]; /* the load rq_x[i] is in local kn_rq<rq_id[i]> */
    int rq_id[6];
    bool rq_printed; /* the last statement was mve_rq_decl's */
} kn_cprint;

void kn_cprint_init(kn_cprint *P, const kn_kprog *p, FILE *f, kn_dialect d);
void kn_cprint_stmt(kn_cprint *P, const kn_ks *s, int indent);
void kn_cprint_expr(kn_cprint *P, const kn_kx *x);
void kn_cprint_const(const kn_cprint *P, kn_dtype t, double v, int64_t i);
/* The helper functions the printed code calls, as definitions (after printing). */
void kn_cprint_helpers(const kn_cprint *P, FILE *f);
/* Whether the printed kernels call RegexFullMatch's helpers, which need POSIX 2008
 * (newlocale, uselocale): then kn_cprint_posix_prelude must open the file, before
 * any #include. */
bool kn_cprint_uses_regex(const kn_cprint *P);
void kn_cprint_posix_prelude(FILE *f);
/* C99: KN_SELF, the KN_FMAF/KN_FMAD macros and, under `#if KN_VECTOR_EXT`, the vector types and
 * macros the printed code uses (after printing with P, and its vec_ext twin V, which may
 * be NULL); target_fma: the target fuses multiply-adds (kn_target.fma). Prints nothing
 * when none is used. */
void kn_cprint_vector_prelude(const kn_cprint *P, const kn_cprint *V, bool target_fma, FILE *f);
/* OpenCL: the vector types and KN_* macros the printed code uses, over OpenCL C's
 * floatN, vloadN/vstoreN and select (widths up to 16); fma is a*b + c as the scalar
 * form prints it. */
void kn_cprint_ocl_vectors(const kn_cprint *P, FILE *f);
/* The element type of dtype t in the dialect ("float", "int64_t" / "long", ...). */
const char *kn_cprint_ctype(const kn_cprint *P, kn_dtype t);
const char *kn_ctype_c99(kn_dtype t);

#endif
