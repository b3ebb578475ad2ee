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
/* Whether kernel k runs on the host: it touches a string tensor (host pointers mean
 * nothing on a device). Host kernels are the C backend's (kn_emit_c_host_kernels),
 * called from the host code between the device launches, as ONNX Runtime falls back
 * to its CPU provider for the ops a device provider lacks. */
bool kn_opencl_on_host(const kn_kprog *p, int k);
/* Whether kernel k does nothing (a Reshape or Flatten whose output the memory plan put
 * over its input): it is neither emitted nor launched, since every launch costs a
 * hand-off to the device's threads (a PoCL round trip is 10-50 us on 2 cores). */
bool kn_opencl_empty(const kn_kprog *p, int k);

/* One step of a run, in order: launch device kernel `arg`, call host kernel `arg`, or
 * copy unit `arg` to the device (UPLOAD) or back to the host (DOWNLOAD). The units
 * are the host code's io[] buffers, graph input i (i), output j (nin + j), the status
 * word (nin + nout), and the work arena (nin + nout + 1), copied whole. */
typedef enum kn_opencl_step_kind {
    KN_OCL_DEVICE,
    KN_OCL_HOST,
    KN_OCL_UPLOAD,
    KN_OCL_DOWNLOAD,
} kn_opencl_step_kind;

typedef struct kn_opencl_step {
    kn_opencl_step_kind kind;
    int arg;
} kn_opencl_step;

/* The steps of one run: the uploads of the inputs device kernels read, then the
 * kernels in order, each preceded by the copies that make every unit it reads or
 * writes current on its side (a copy only where the other side holds the newest
 * contents: the inputs start on the host, the zeroed status word on both; empty kernels
 * are left out, kn_opencl_empty), and at the
 * end the downloads that bring every output and the status word the device holds
 * back. Without host kernels: uploads, launches, downloads. *n gets the count; the array is
 * malloc'd (caller frees). */
kn_opencl_step *kn_opencl_schedule(const kn_kprog *p, int *n);
/* The program's OpenCL C source (the device kernels only); *src is malloc'd (caller frees). */
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
