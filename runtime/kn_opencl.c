/* kiln's thin C layer over the Halide runtime's OpenCL device interface (see
 * kn_opencl.h for the contract and docs/opencl.md for the conventions generated
 * code follows).
 *
 * The layer validates every argument before calling Halide, because the runtime
 * aborts (halide_abort_if_false) on some misuse instead of returning an error: a
 * zero-sized allocation, a negative stride, a state it does not know. Halide's
 * own failures come back as nonzero ints (halide_error_code_t or cl_int values,
 * both negative) and map to KN_OPENCL_EDEVICE; their text went to halide_error().
 *
 * The probe talks to the OpenCL library directly, through the same symbol lookup
 * Halide uses (halide_opencl_get_symbol), so that it neither creates a context nor
 * makes the runtime report an error when there is no platform. */
#define CL_TARGET_OPENCL_VERSION 120
#include "runtime/kn_opencl.h"

#include <stdint.h>
#include <string.h>

#include <CL/cl.h>
#include <HalideRuntimeOpenCL.h>

/* Exported by the runtime object but declared in no public header. */
extern void *halide_opencl_get_symbol(void *user_context, const char *name);
extern int halide_opencl_device_sync(void *user_context, struct halide_buffer_t *buf);

struct kn_opencl_state {
    void *module; /* Halide's compilation-cache handle, set by initialize_kernels */
};

static int from_halide(int err) {
    return err == 0 ? KN_OPENCL_OK : KN_OPENCL_EDEVICE;
}

const char *kn_opencl_strerror(int status) {
    switch (status) {
    case KN_OPENCL_OK: return "ok";
    case KN_OPENCL_EINVAL: return "invalid argument";
    case KN_OPENCL_ELIMIT: return "limit exceeded";
    case KN_OPENCL_ENOPLATFORM: return "no OpenCL platform found";
    case KN_OPENCL_EDEVICE: return "OpenCL runtime error";
    case KN_OPENCL_ENOMEM: return "out of memory";
    default: return "unknown status";
    }
}

/* ---- probe */

typedef cl_int(CL_API_CALL *get_platform_ids_fn)(cl_uint, cl_platform_id *, cl_uint *);
typedef cl_int(CL_API_CALL *get_platform_info_fn)(cl_platform_id, cl_platform_info, size_t, void *,
                                                  size_t *);
typedef cl_int(CL_API_CALL *get_device_ids_fn)(cl_platform_id, cl_device_type, cl_uint,
                                               cl_device_id *, cl_uint *);

/* The device types Halide asks for: substrings of HL_OCL_DEVICE_TYPE, all if none. */
static cl_device_type halide_device_type(void *user_context) {
    const char *s = halide_opencl_get_device_type(user_context);
    cl_device_type t = 0;
    if (s && strstr(s, "cpu")) t |= CL_DEVICE_TYPE_CPU;
    if (s && strstr(s, "gpu")) t |= CL_DEVICE_TYPE_GPU;
    if (s && strstr(s, "acc")) t |= CL_DEVICE_TYPE_ACCELERATOR;
    return t ? t : CL_DEVICE_TYPE_ALL;
}

int kn_opencl_probe(void *user_context) {
    /* POSIX lets a void * hold a function pointer; ISO C needs the memcpy. */
    get_platform_ids_fn get_ids;
    get_platform_info_fn get_info;
    get_device_ids_fn get_devices;
    void *p = halide_opencl_get_symbol(user_context, "clGetPlatformIDs");
    memcpy(&get_ids, &p, sizeof p);
    p = halide_opencl_get_symbol(user_context, "clGetPlatformInfo");
    memcpy(&get_info, &p, sizeof p);
    p = halide_opencl_get_symbol(user_context, "clGetDeviceIDs");
    memcpy(&get_devices, &p, sizeof p);
    if (!get_ids || !get_info || !get_devices) return KN_OPENCL_ENOPLATFORM;

    /* Halide looks at the first 4 platforms and takes the first whose name
     * contains the requested one, or the first platform. Mirror that. */
    cl_platform_id platforms[4];
    cl_uint n = 0;
    if (get_ids(4, platforms, &n) != CL_SUCCESS || n == 0) return KN_OPENCL_ENOPLATFORM;
    if (n > 4) n = 4;
    const char *want = halide_opencl_get_platform_name(user_context);
    cl_platform_id chosen = NULL;
    if (want && *want) {
        for (cl_uint i = 0; i < n && !chosen; i++) {
            char name[256] = "";
            if (get_info(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL) == CL_SUCCESS &&
                strstr(name, want))
                chosen = platforms[i];
        }
    } else {
        chosen = platforms[0];
    }
    if (!chosen) return KN_OPENCL_ENOPLATFORM;
    cl_uint ndev = 0;
    if (get_devices(chosen, halide_device_type(user_context), 0, NULL, &ndev) != CL_SUCCESS ||
        ndev == 0)
        return KN_OPENCL_ENOPLATFORM;
    return KN_OPENCL_OK;
}

/* ---- programs */

int kn_opencl_state_create(void *user_context, const char *source, size_t size,
                           kn_opencl_state **out) {
    if (!out) return KN_OPENCL_EINVAL;
    *out = NULL;
    if (!source || size == 0) return KN_OPENCL_EINVAL;
    if (size > INT32_MAX) return KN_OPENCL_ELIMIT;
    kn_opencl_state *st = halide_malloc(user_context, sizeof *st);
    if (!st) return KN_OPENCL_ENOMEM;
    st->module = NULL;
    /* Builds the program now (or takes it from Halide's cache for this context)
     * and holds it until halide_opencl_finalize_kernels. */
    int err = halide_opencl_initialize_kernels(user_context, &st->module, source, (int)size);
    if (err) {
        /* A failed build leaves no hold to release. */
        halide_free(user_context, st);
        return from_halide(err);
    }
    *out = st;
    return KN_OPENCL_OK;
}

void kn_opencl_state_destroy(void *user_context, kn_opencl_state *st) {
    if (!st) return;
    halide_opencl_finalize_kernels(user_context, st->module);
    halide_free(user_context, st);
}

/* ---- buffers */

int kn_opencl_buffer_create(void *user_context, kn_opencl_buffer *b, void *host, size_t elem_size,
                            size_t count) {
    if (!b) return KN_OPENCL_EINVAL;
    memset(b, 0, sizeof *b);
    if (elem_size != 1 && elem_size != 2 && elem_size != 4 && elem_size != 8)
        return KN_OPENCL_EINVAL;
    if (count == 0) return KN_OPENCL_EINVAL; /* Halide aborts on a 0-byte allocation */
    if (count > INT32_MAX) return KN_OPENCL_ELIMIT;
    b->dim[0].min = 0;
    b->dim[0].extent = (int32_t)count;
    b->dim[0].stride = 1;
    b->hb.host = host;
    /* The element type only sizes copies; the kernel sees raw __global memory. */
    b->hb.type.code = halide_type_uint;
    b->hb.type.bits = (uint8_t)(8 * elem_size);
    b->hb.type.lanes = 1;
    b->hb.dimensions = 1;
    b->hb.dim = b->dim;
    int err = halide_device_malloc(user_context, &b->hb, halide_opencl_device_interface());
    if (err) {
        memset(b, 0, sizeof *b);
        return from_halide(err);
    }
    return KN_OPENCL_OK;
}

void kn_opencl_buffer_destroy(void *user_context, kn_opencl_buffer *b) {
    if (!b || !b->hb.device) return;
    (void)halide_device_free(user_context, &b->hb); /* a failure still drops the handle */
    b->hb.device = 0;
    b->hb.device_interface = NULL;
    b->hb.flags = 0;
}

static int check_transfer(const kn_opencl_buffer *b) {
    if (!b || !b->hb.device || b->hb.dim != b->dim) return KN_OPENCL_EINVAL;
    if (!b->hb.host) return KN_OPENCL_EINVAL; /* device-only buffer */
    return KN_OPENCL_OK;
}

int kn_opencl_upload(void *user_context, kn_opencl_buffer *b) {
    int st = check_transfer(b);
    if (st) return st;
    /* Halide copies host to device only when the host is dirty, and refuses a
     * buffer dirty on both sides. */
    b->hb.flags &= ~(uint64_t)halide_buffer_flag_device_dirty;
    b->hb.flags |= halide_buffer_flag_host_dirty;
    return from_halide(
        halide_copy_to_device(user_context, &b->hb, halide_opencl_device_interface()));
}

int kn_opencl_download(void *user_context, kn_opencl_buffer *b) {
    int st = check_transfer(b);
    if (st) return st;
    b->hb.flags &= ~(uint64_t)halide_buffer_flag_host_dirty;
    b->hb.flags |= halide_buffer_flag_device_dirty;
    return from_halide(halide_copy_to_host(user_context, &b->hb));
}

/* ---- launches */

int kn_opencl_launch(void *user_context, kn_opencl_state *st, const char *name, const int global[3],
                     const int local[3], int local_mem_bytes, const kn_opencl_arg *args,
                     int nargs) {
    if (!st || !st->module || !name || !global || !local || local_mem_bytes < 0 || nargs < 0 ||
        (nargs > 0 && !args))
        return KN_OPENCL_EINVAL;
    if (nargs > KN_OPENCL_MAX_ARGS) return KN_OPENCL_ELIMIT;

    int blocks[3];
    for (int d = 0; d < 3; d++) {
        if (global[d] < 1 || local[d] < 1) return KN_OPENCL_EINVAL;
        blocks[d] = global[d] / local[d] + (global[d] % local[d] != 0);
    }

    /* Halide's argument lists end with a 0 size and a NULL pointer. A buffer is
     * passed as a pointer to its halide_buffer_t.device field (the first field,
     * so the runtime may read it as the buffer itself) with size 8. */
    size_t sizes[KN_OPENCL_MAX_ARGS + 1];
    void *values[KN_OPENCL_MAX_ARGS + 1];
    int8_t is_buffer[KN_OPENCL_MAX_ARGS + 1];
    for (int i = 0; i < nargs; i++) {
        const kn_opencl_arg *a = &args[i];
        if (a->kind == KN_OPENCL_ARG_BUFFER) {
            if (!a->buffer || !a->buffer->hb.device) return KN_OPENCL_EINVAL;
            sizes[i] = sizeof a->buffer->hb.device;
            values[i] = &a->buffer->hb.device;
            is_buffer[i] = 1;
        } else if (a->kind == KN_OPENCL_ARG_SCALAR) {
            if (!a->value || a->size == 0 || a->size > 16) return KN_OPENCL_EINVAL;
            sizes[i] = a->size;
            values[i] = (void *)(uintptr_t)a->value; /* Halide's API is not const-correct */
            is_buffer[i] = 0;
        } else {
            return KN_OPENCL_EINVAL;
        }
    }
    sizes[nargs] = 0;
    values[nargs] = NULL;
    is_buffer[nargs] = 0;

    return from_halide(halide_opencl_run(user_context, st->module, name, blocks[0], blocks[1],
                                         blocks[2], local[0], local[1], local[2], local_mem_bytes,
                                         sizes, values, is_buffer));
}

int kn_opencl_finish(void *user_context) {
    return from_halide(halide_opencl_device_sync(user_context, NULL));
}

void kn_opencl_release(void *user_context) {
    halide_device_release(user_context, halide_opencl_device_interface());
}
