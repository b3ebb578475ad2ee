/* The C-family printer of kernel IR: statements and expressions as C99 or OpenCL C.
 * The C emitter and the OpenCL emitter lay out their files differently but print
 * kernel bodies through this one printer; a dialect changes type names, math
 * function names, half-precision access and element copies, nothing else.
 *
 * Vectors (kernel-IR lanes > 1) are printed as C arrays: a vector local is `float
 * v5[16]`, and a statement with a vector value becomes a loop over the lanes
 * `for (int kn_l = 0; kn_l < 16; kn_l++)` whose body reads lane kn_l of every vector
 * operand. Compilers turn these loops into SIMD code where the target has it. */
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
    const kn_ks *gid[3];   /* OpenCL: loops that are NDRange dims 0..2 */
    int ngid;
    bool in_lane;                      /* printing one lane (kn_l) of a vector statement */
    unsigned helpers;                  /* half-precision helpers used */
    unsigned char types[KN_DTYPE_MAX]; /* per dtype: min/max/abs/div/rem/shift helpers used */
} kn_cprint;

void kn_cprint_init(kn_cprint *P, const kn_kprog *p, FILE *f, kn_dialect d);
void kn_cprint_stmt(kn_cprint *P, const kn_ks *s, int indent);
void kn_cprint_expr(kn_cprint *P, const kn_kx *x);
void kn_cprint_const(const kn_cprint *P, kn_dtype t, double v, int64_t i);
/* The helper functions the printed code calls, as definitions (after printing). */
void kn_cprint_helpers(const kn_cprint *P, FILE *f);
/* The element type of dtype t in the dialect ("float", "int64_t" / "long", ...). */
const char *kn_cprint_ctype(const kn_cprint *P, kn_dtype t);
const char *kn_ctype_c99(kn_dtype t);

#endif
