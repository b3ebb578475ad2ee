/* kiln.h: the host C API. Load an ONNX model, compile it in process with the LLVM
 * JIT, and run it on buffers the caller owns.
 *
 * Three opaque handles, each with a create and a destroy:
 *
 *   kiln_model     a loaded ONNX model                 kiln_model_load_file / _memory,
 *                                                      kiln_model_destroy
 *   kiln_options   how to compile (target, -O, shapes) kiln_options_create / _destroy
 *   kiln_compiled  machine code and its metadata       kiln_compile_jit,
 *                                                      kiln_compiled_destroy
 *
 * A compiled model depends on neither the model nor the options it was made from:
 * both may be destroyed right after kiln_compile_jit().
 *
 * Errors. Every function that can fail returns a kiln_status: KILN_OK (0) or one of
 * the negative codes below, whose values are stable. The message of the most recent
 * such call is kiln_last_error(), kept per thread (not per handle, so that a failed
 * create, which has no handle, still explains itself). Functions that cannot fail
 * (getters, destroys) leave it untouched.
 *
 * Ownership. Each declaration says who owns what it takes and returns: "owned by the
 * caller" means the caller destroys it with the named function; "borrowed" means it
 * stays valid until the named handle is destroyed and must not be freed.
 *
 * Thread safety. Distinct handles may be used from different threads at once: loading,
 * compiling and running are reentrant. One kiln_model may be compiled by several
 * threads at once. One kiln_compiled may be run concurrently by several threads, each
 * with its own workspace and outputs; it must not be destroyed while a run is in
 * progress. A handle must not be changed (set_*, destroy) while another thread uses it.
 *
 * The header needs only <stddef.h> and <stdint.h>, and compiles as C99 or C++. Link
 * with -lkiln. See docs/c-api.md. */
#ifndef KILN_H
#define KILN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Incremented when a declaration changes incompatibly. */
#define KILN_API_VERSION 1

/* ---- status codes and errors ---- */

/* Stable values; new codes may be added, existing ones never change. */
typedef enum kiln_status {
    KILN_OK = 0,
    KILN_EINVAL = -1,       /* bad argument, model or input: the caller's problem */
    KILN_EUNSUPPORTED = -2, /* valid ONNX (or a target) that kiln does not handle */
    KILN_EIO = -3,          /* a file could not be read */
    KILN_ELIMIT = -4,       /* a resource limit was exceeded (memory, rank, size) */
    KILN_EINTERNAL = -5     /* kiln's own bug, or LLVM failed */
} kiln_status;

/* The message of the most recent kiln call on this thread that returns a kiln_status:
 * "" if it succeeded, else what failed and why, e.g. "model.onnx: node 'conv_3' (Conv):
 * kernel_shape has 3 dims, expected 2". Never NULL. Borrowed: valid until the next
 * such call on the same thread. */
const char *kiln_last_error(void);

/* A short description of a status ("invalid argument"). Static storage; never NULL. */
const char *kiln_status_string(kiln_status status);

/* ---- element types ---- */

/* Stable values, equal to ONNX TensorProto.DataType. Data is dense and row-major;
 * bool is one byte (0 or 1); f16 and bf16 are uint16_t bit patterns; the float8 types
 * are one byte each, their ONNX bit patterns (the code, not a value); 4-bit integers
 * take one byte per element, not two to a byte as in ONNX files: i4 an int8_t in
 * [-8, 7], u4 a uint8_t in [0, 15]. */
typedef enum kiln_dtype {
    KILN_DTYPE_UNDEFINED = 0,
    KILN_DTYPE_F32 = 1,
    KILN_DTYPE_U8 = 2,
    KILN_DTYPE_I8 = 3,
    KILN_DTYPE_U16 = 4,
    KILN_DTYPE_I16 = 5,
    KILN_DTYPE_I32 = 6,
    KILN_DTYPE_I64 = 7,
    KILN_DTYPE_STRING = 8, /* an element is a `const char *` to NUL-terminated UTF-8: a
                              string tensor is an array of pointers (kiln_compiled_run) */
    KILN_DTYPE_BOOL = 9,
    KILN_DTYPE_F16 = 10,
    KILN_DTYPE_F64 = 11,
    KILN_DTYPE_U32 = 12,
    KILN_DTYPE_U64 = 13,
    KILN_DTYPE_BF16 = 16,
    KILN_DTYPE_F8E4M3FN = 17,   /* float8: 1.4.3, bias 7, no infinities, max 448 */
    KILN_DTYPE_F8E4M3FNUZ = 18, /* 1.4.3, bias 8, NaN 0x80 (no -0), max 240 */
    KILN_DTYPE_F8E5M2 = 19,     /* 1.5.2, bias 15, IEEE-like with infinities, max 57344 */
    KILN_DTYPE_F8E5M2FNUZ = 20, /* 1.5.2, bias 16, NaN 0x80 (no -0), max 57344 */
    KILN_DTYPE_U4 = 21,
    KILN_DTYPE_I4 = 22
} kiln_dtype;

/* Bytes per element of dtype; 0 for KILN_DTYPE_UNDEFINED or an unknown value. */
size_t kiln_dtype_size(kiln_dtype dtype);
/* "f32", "i64", ...; "?" for an unknown value. Static storage; never NULL. */
const char *kiln_dtype_name(kiln_dtype dtype);

/* ---- models ---- */

/* A parsed ONNX model: immutable once loaded. */
typedef struct kiln_model kiln_model;

/* Loads the ONNX model at path. External data files are read relative to path's
 * folder. On success *out is a new model owned by the caller (kiln_model_destroy);
 * on failure *out is NULL. path is borrowed for the call only.
 * Errors: KILN_EINVAL (NULL argument, not a valid ONNX model), KILN_EIO (cannot read
 * the file or its external data), KILN_EUNSUPPORTED (an opset or feature kiln lacks). */
kiln_status kiln_model_load_file(const char *path, kiln_model **out);

/* Loads an ONNX model from size bytes at data, which are copied: the caller may free
 * them when this returns. base_dir is the folder external data is read from, or NULL
 * to refuse models with external data. On success *out is a new model owned by the
 * caller (kiln_model_destroy); on failure *out is NULL. Errors as
 * kiln_model_load_file. */
kiln_status kiln_model_load_memory(const void *data, size_t size, const char *base_dir,
                                   kiln_model **out);

/* Frees a model. NULL is a no-op. Compiled models made from it stay valid. */
void kiln_model_destroy(kiln_model *model);

/* ---- compile options ---- */

/* Settings for kiln_compile_jit; may be reused for several compilations. */
typedef struct kiln_options kiln_options;

/* On success *out is a new options object with the defaults (target "native",
 * optimization level 2, threads 0, no fixed shapes), owned by the caller
 * (kiln_options_destroy). Errors: KILN_EINVAL (out is NULL), KILN_ELIMIT (no memory). */
kiln_status kiln_options_create(kiln_options **out);

/* Frees options. NULL is a no-op. */
void kiln_options_destroy(kiln_options *options);

/* The target to compile for, by the names `kiln compile --target` takes ("native",
 * "generic", "x86-64-avx2", "cortex-m4", ...). The JIT runs code in this process, so
 * only the host targets ("native": this CPU's features; "generic": baseline) compile
 * with it; the others fail in kiln_compile_jit with KILN_EUNSUPPORTED. name is copied.
 * Errors: KILN_EINVAL (NULL argument, unknown target name). */
kiln_status kiln_options_set_target(kiln_options *options, const char *name);

/* Optimization level 0 to 3, as -O0 ... -O3: 2 and up enable the loop and SLP
 * vectorizers. Errors: KILN_EINVAL (NULL options, level outside 0..3). */
kiln_status kiln_options_set_opt_level(kiln_options *options, int level);

/* Threads a run may use; 0 (the default) uses one per online CPU, 1 the calling thread
 * only. A model compiled with N > 1 threads owns a pool of N - 1 worker threads
 * (started by kiln_compile_jit, joined by kiln_compiled_destroy) that run the kernels'
 * parallel loops with the calling thread; they spin while a run is in progress and
 * sleep between runs. Concurrent runs of one model share its pool: a parallel loop that
 * finds the workers busy with another run's loop runs on its own thread.
 * Errors: KILN_EINVAL (NULL options, threads < 0). */
kiln_status kiln_options_set_threads(kiln_options *options, int threads);

/* Fixes the whole shape of the graph input named input to dims[0..rank). Compiled
 * code is specialized to static shapes, so every input with a symbolic or unknown
 * dimension needs a shape here (or kiln_options_set_dim). Setting the same input
 * again replaces the shape. input and dims are copied. The name is checked against
 * the model in kiln_compile_jit, which fails with KILN_EINVAL if the model has no such
 * input or the shape contradicts the model's.
 * Errors: KILN_EINVAL (NULL argument, an empty name or one with '=', rank above 8,
 * a negative dim). */
kiln_status kiln_options_set_input_shape(kiln_options *options, const char *input, size_t rank,
                                         const int64_t *dims);

/* Fixes every input dimension named dim (a symbolic dimension such as "batch") to
 * value. dim is copied; kiln_compile_jit fails with KILN_EINVAL if no input dimension
 * has that name. Errors: KILN_EINVAL (NULL argument, an empty name or one with '=',
 * value < 0). */
kiln_status kiln_options_set_dim(kiln_options *options, const char *dim, int64_t value);

/* Bounds memory by bytes (0, the default: no limit). While compiling, the reference
 * interpreter evaluates what it can at compile time (constant folding of sub-graphs
 * whose inputs are constants, in the model's memory, weights included): a node whose
 * results would bring that memory above bytes makes kiln_compile_jit fail with
 * KILN_ELIMIT, naming the node, instead of exhausting memory. A compiled model whose
 * workspace (kiln_compiled_workspace_size) would exceed bytes is refused the same way.
 * Errors: KILN_EINVAL (NULL options). */
kiln_status kiln_options_set_max_memory(kiln_options *options, size_t bytes);

/* Stores float32 weights as "f16" (IEEE half) or "bf16" (bfloat16), as kiln compile
 * --weights does: the weights are rounded to that precision (to nearest even) and the
 * compiled code holds them in half the bytes, widening them to float32 where it reads
 * them; "f32" (the default) keeps them. Errors: KILN_EINVAL (NULL options, another
 * name). */
kiln_status kiln_options_set_weights(kiln_options *options, const char *format);

/* Bytes of storage for each string a run makes whose length is known only then (a
 * case change by StringNormalizer, StringConcat), NUL included; as kiln compile
 * --max-string-bytes. Default 256. A longer string is cut to bytes - 1 and
 * kiln_compiled_run returns KILN_ELIMIT after finishing the run. The storage is part
 * of the workspace. Errors: KILN_EINVAL (NULL options, bytes outside 1..2^30). */
kiln_status kiln_options_set_max_string_bytes(kiln_options *options, size_t bytes);

/* ---- compiling ---- */

/* A model compiled to machine code for fixed input shapes, with its metadata. */
typedef struct kiln_compiled kiln_compiled;

/* Compiles model with options (NULL: the defaults) through the LLVM JIT into code in
 * this process. Neither model nor options is modified or retained: both may be
 * destroyed afterwards. On success *out is owned by the caller
 * (kiln_compiled_destroy); on failure *out is NULL.
 * Errors: KILN_EINVAL (NULL argument; a shape option names no input or contradicts
 * the model; an input's shape is still symbolic or unknown), KILN_EUNSUPPORTED (an
 * operator or dtype without code generation; a shape that depends on input values; a
 * target that cannot run in process), KILN_ELIMIT, KILN_EINTERNAL. */
kiln_status kiln_compile_jit(const kiln_model *model, const kiln_options *options,
                             kiln_compiled **out);

/* Frees the code and metadata. NULL is a no-op. No run may be in progress. */
void kiln_compiled_destroy(kiln_compiled *compiled);

/* Inputs and outputs, in the order of the ONNX graph's inputs (those that are not
 * initializers) and outputs. The getters below take an index below the count; for an
 * index out of range (or a NULL handle) they return NULL, KILN_DTYPE_UNDEFINED, -1 or
 * 0. Returned pointers are borrowed: valid until kiln_compiled_destroy(compiled).
 * Sequences and optionals are flattened as in generated C (docs/generated-c.md): a
 * sequence output of compile-time length L is L tensor outputs named NAME_0 ..
 * NAME_{L-1}, an empty optional output none. A model with a sequence or optional
 * input fails in kiln_compile_jit() with KILN_EUNSUPPORTED (its length cannot be given
 * here). */
size_t kiln_compiled_input_count(const kiln_compiled *compiled);
size_t kiln_compiled_output_count(const kiln_compiled *compiled);

/* The ONNX value name. */
const char *kiln_compiled_input_name(const kiln_compiled *compiled, size_t index);
const char *kiln_compiled_output_name(const kiln_compiled *compiled, size_t index);
kiln_dtype kiln_compiled_input_dtype(const kiln_compiled *compiled, size_t index);
kiln_dtype kiln_compiled_output_dtype(const kiln_compiled *compiled, size_t index);
/* Number of dimensions, 0 for a scalar. */
int kiln_compiled_input_rank(const kiln_compiled *compiled, size_t index);
int kiln_compiled_output_rank(const kiln_compiled *compiled, size_t index);
/* rank dimensions, outermost first (NULL for rank 0 or out of range). */
const int64_t *kiln_compiled_input_dims(const kiln_compiled *compiled, size_t index);
const int64_t *kiln_compiled_output_dims(const kiln_compiled *compiled, size_t index);
/* The buffer's size in bytes: the product of the dims times kiln_dtype_size(). */
size_t kiln_compiled_input_bytes(const kiln_compiled *compiled, size_t index);
size_t kiln_compiled_output_bytes(const kiln_compiled *compiled, size_t index);

/* The workspace a run needs for intermediate tensors: this many bytes (0: none, the
 * workspace may be NULL), aligned to kiln_compiled_workspace_alignment() bytes (a
 * power of two, 64 today). Its contents do not matter before or after a run. */
size_t kiln_compiled_workspace_size(const kiln_compiled *compiled);
size_t kiln_compiled_workspace_alignment(const kiln_compiled *compiled);

/* Runs the model. inputs[i] points to input i's data (kiln_compiled_input_bytes, read
 * only); outputs[j] to output j's buffer (kiln_compiled_output_bytes, overwritten);
 * workspace to kiln_compiled_workspace_size() bytes aligned as above. All are
 * borrowed for the call only; buffers must not overlap. The call allocates nothing.
 * Strings (KILN_DTYPE_STRING): a string input is an array of `const char *`, one
 * NUL-terminated UTF-8 string per element, read during the call only. A string output
 * buffer is an array of `const char *` that the run fills with pointers it owns: into
 * the workspace (a new string) or into an input's strings (one passed through
 * unchanged). They stay valid until the next run with the same workspace, and as long
 * as the input strings do; do not write through them, and copy what must outlive
 * either.
 * Concurrent runs of one compiled model need distinct workspaces and outputs.
 * Errors: KILN_EINVAL (NULL compiled, NULL inputs/outputs array or entry, a NULL or
 * misaligned workspace when one is needed; the inputs make an If take a branch that
 * cannot run with the compiled input shapes), KILN_ELIMIT (a new string longer than
 * kiln_options_set_max_string_bytes: it was cut, every output written; a regular
 * expression out of memory), KILN_EUNSUPPORTED (the inputs ask for training-mode
 * Dropout: the outputs are inference mode's), KILN_EINTERNAL (the code reported a
 * failure). On other errors the outputs are unspecified. */
kiln_status kiln_compiled_run(const kiln_compiled *compiled, const void *const *inputs,
                              void *const *outputs, void *workspace);

#ifdef __cplusplus
}
#endif

#endif /* KILN_H */
