/* kiln's thin C layer over the Halide runtime's OpenCL device interface.
 *
 * What generated OpenCL host code calls: build a program from OpenCL C source once
 * (kn_opencl_state), wrap host arrays as device buffers (kn_opencl_buffer, a
 * halide_buffer_t with an OpenCL allocation), copy them to and from the device, and
 * launch kernels by name. Everything goes through the standalone Halide runtime
 * object (library kiln_halide_runtime), so the OpenCL library is loaded lazily
 * with dlopen("libOpenCL.so") and the context and queue are Halide's (one per
 * process, shared by every state).
 *
 * Conventions:
 * - Every function takes `void *user_context` first; it is passed unchanged to the
 *   Halide runtime, which hands it to its hooks (halide_set_error_handler, custom
 *   malloc, ...). NULL is fine.
 * - Fallible functions return 0 or a negative KN_OPENCL_E* status. Nothing here
 *   prints. Failures inside Halide or the OpenCL driver (build log, CL error name)
 *   are reported by the runtime through halide_error(), whose default handler
 *   writes to stderr; a host installs its own with halide_set_error_handler().
 * - Every kernel must declare a trailing `__local uchar *` parameter after the
 *   arguments given to kn_opencl_launch: halide_opencl_run always appends it.
 * - Transfers are explicit: the layer keeps no residency state of its own. Upload
 *   before a kernel reads a buffer, download after one writes it.
 * - Not thread-safe per object: one state or buffer is used by one thread at a
 *   time (Halide serializes access to its context internally). */
#ifndef KN_OPENCL_H
#define KN_OPENCL_H

#include <stddef.h>

#include <HalideRuntime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. The shared values match kn_status in ir/diag.h. */
enum {
    KN_OPENCL_OK = 0,
    KN_OPENCL_EINVAL = -1,      /* bad argument: the caller's bug */
    KN_OPENCL_ELIMIT = -4,      /* more arguments, dimensions or elements than supported */
    KN_OPENCL_ENOPLATFORM = -6, /* no OpenCL library, platform or device */
    KN_OPENCL_EDEVICE = -7,     /* the Halide runtime or the OpenCL driver failed */
    KN_OPENCL_ENOMEM = -8,      /* host allocation failed */
};

#define KN_OPENCL_MAX_ARGS 64 /* kernel arguments per launch, not counting the __local one */

/* A short message for a status: "no OpenCL platform found" for
 * KN_OPENCL_ENOPLATFORM. Static storage; never NULL. */
const char *kn_opencl_strerror(int status);

/* 0 if the Halide runtime will find an OpenCL device, KN_OPENCL_ENOPLATFORM if not
 * (no libOpenCL.so, no platform, or the platform Halide would pick, honouring
 * HL_OCL_PLATFORM_NAME and HL_OCL_DEVICE_TYPE, has no device). Creates no
 * context; reports nothing through halide_error(). */
int kn_opencl_probe(void *user_context);

/* ---- programs */

/* One OpenCL program, built once from source. Opaque. */
typedef struct kn_opencl_state kn_opencl_state;

/* Builds `source` (OpenCL C, `size` bytes, NUL not required) for Halide's context
 * with halide_opencl_initialize_kernels and stores the new state in *out. The
 * source is copied by the driver; it may be freed on return. Build options come
 * from halide_opencl_set_build_options() or HL_OCL_BUILD_OPTIONS. The state is
 * owned by the caller: release it with kn_opencl_state_destroy(). */
int kn_opencl_state_create(void *user_context, const char *source, size_t size,
                           kn_opencl_state **out);

/* Releases the program (halide_opencl_finalize_kernels) and the state. NULL is a
 * no-op. Kernels already enqueued still run. */
void kn_opencl_state_destroy(void *user_context, kn_opencl_state *st);

/* ---- buffers */

/* A device buffer for a host array: a 1-D halide_buffer_t of `count` elements of
 * `elem_size` bytes with an OpenCL allocation. The struct is caller-owned storage
 * (it may live in a static or in an arena) and must not move while it has an
 * allocation: Halide keeps pointers to it only during calls, but kernels receive
 * hb.device. The fields are Halide's; read them, do not write them. */
typedef struct kn_opencl_buffer {
    halide_buffer_t hb;
    halide_dimension_t dim[1];
} kn_opencl_buffer;

/* Fills *b and allocates `count * elem_size` bytes on the device (contents
 * undefined). `host` is borrowed, must hold that many bytes and outlive the
 * buffer; it may be NULL for a device-only buffer (an intermediate that never
 * comes back), which cannot be uploaded or downloaded. elem_size is 1, 2, 4 or 8;
 * count is 1 to INT32_MAX. On failure *b holds no allocation. */
int kn_opencl_buffer_create(void *user_context, kn_opencl_buffer *b, void *host, size_t elem_size,
                            size_t count);

/* Frees the device allocation (halide_device_free); the host array is untouched.
 * Safe on a zeroed or already destroyed buffer. */
void kn_opencl_buffer_destroy(void *user_context, kn_opencl_buffer *b);

/* Host to device: marks the host side dirty and copies the whole array. Blocks
 * until the copy is done. */
int kn_opencl_upload(void *user_context, kn_opencl_buffer *b);

/* Device to host: marks the device side dirty and copies the whole array, after
 * every kernel enqueued before it (one in-order queue). Blocks until done. */
int kn_opencl_download(void *user_context, kn_opencl_buffer *b);

/* ---- launches */

typedef enum kn_opencl_arg_kind {
    KN_OPENCL_ARG_SCALAR = 0, /* `size` bytes at `value`, passed by value */
    KN_OPENCL_ARG_BUFFER = 1, /* `buffer`'s cl_mem, as a `__global T *` parameter */
} kn_opencl_arg_kind;

/* One kernel argument, in the order of the kernel's parameters. */
typedef struct kn_opencl_arg {
    kn_opencl_arg_kind kind;
    size_t size;              /* scalar: bytes (1 to 16, as the kernel declares); buffer: 0 */
    const void *value;        /* scalar: borrowed for the call only */
    kn_opencl_buffer *buffer; /* buffer: must have an allocation */
} kn_opencl_arg;

static inline kn_opencl_arg kn_opencl_arg_buffer(kn_opencl_buffer *b) {
    kn_opencl_arg a = {KN_OPENCL_ARG_BUFFER, 0, NULL, b};
    return a;
}

static inline kn_opencl_arg kn_opencl_arg_scalar(const void *value, size_t size) {
    kn_opencl_arg a = {KN_OPENCL_ARG_SCALAR, size, value, NULL};
    return a;
}

/* A scalar argument from an lvalue: KN_OPENCL_SCALAR(n) for an `int n`. */
#define KN_OPENCL_SCALAR(x) kn_opencl_arg_scalar(&(x), sizeof(x))

/* Enqueues kernel `name` of st's program over an NDRange of `global[d]` work-items
 * in work-groups of `local[d]` (d = 0..2; unused dimensions 1). Each global size
 * is rounded up to a multiple of the local size, so a kernel whose extent is not
 * a multiple must guard with get_global_id(d) < extent. `local_mem_bytes` sizes
 * the trailing __local parameter (0 gives Halide's minimum of 1 byte). Returns
 * once enqueued; kn_opencl_download or kn_opencl_finish wait for completion. */
int kn_opencl_launch(void *user_context, kn_opencl_state *st, const char *name, const int global[3],
                     const int local[3], int local_mem_bytes, const kn_opencl_arg *args, int nargs);

/* Waits for every enqueued command (clFinish on Halide's queue). */
int kn_opencl_finish(void *user_context);

/* Releases Halide's OpenCL context, queue and cached programs
 * (halide_device_release). Every state and buffer must be destroyed first. The
 * next call creates a new context. Optional: the runtime also does this at exit. */
void kn_opencl_release(void *user_context);

#ifdef __cplusplus
}
#endif

#endif /* KN_OPENCL_H */
