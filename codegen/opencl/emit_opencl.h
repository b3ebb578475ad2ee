/* The OpenCL emitter: a planned kernel IR program as OpenCL C 1.2 kernels, plus the
 * launch plan of each kernel (NDRange and buffer arguments) that host code follows.
 * Running the kernels (device buffers, launches) is runtime/kn_opencl.h's job. */
#ifndef KN_EMIT_OPENCL_H
#define KN_EMIT_OPENCL_H

#include "ir/kir.h"

#include <stdio.h>

#define KN_OPENCL_MAX_IO 56 /* graph inputs and outputs one kernel may touch */

/* How host code launches kernel k: arguments kn_arena, kn_weights, then io[0..nio)
 * (graph inputs and outputs), then the __local buffer; over global[0..3) work-items
 * in groups of local[0..3) (ndims 0: a single work-item). */
typedef struct kn_opencl_kernel_plan {
    int ndims;
    int global[3], local[3];
    int nio;
    const kn_kbuf *io[KN_OPENCL_MAX_IO];
} kn_opencl_kernel_plan;

/* io lists the graph inputs and outputs kernel k reads or writes, in buffer order, and
 * the program's status word (kl_fail) when the kernel sets it: that is a one-int32
 * device buffer of its own, which the host zeroes before the first kernel and reads
 * back after the last (io index nin + nout in the host code). */
void kn_opencl_plan(const kn_kprog *p, int k, kn_opencl_kernel_plan *plan);
/* The program's OpenCL C source; *src is malloc'd (caller frees). */
kn_status kn_emit_opencl(kn_ctx *cx, const kn_kprog *p, char **src, size_t *len);
/* kiln compile --emit opencl: NAME.cl (the kernels), NAME.h and NAME.c: host code that
 * embeds the source and the weights, builds the program once per NAME_state, uploads
 * the weights once, and per NAME_run call copies the inputs in, launches each kernel
 * as its plan says, and copies the outputs out (runtime/kn_opencl.h). */
kn_status kn_emit_opencl_host(kn_ctx *cx, const kn_kprog *p, FILE *cl, FILE *h, FILE *c);
/* The host code's weights: `static const unsigned char NAME[size] = {...};` holding the
 * blob of kn_kprog_weight_layout, printed in chunks from each weight's own data (no copy
 * of the blob: compile memory). */
void kn_emit_opencl_weights(FILE *c, const kn_kprog *p, const char *name);

#endif
