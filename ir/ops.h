/* The op table and the interface an operator implements.
 *
 * ir/ops.def lists every operator once; it expands into kn_op (ir/graph.h) and the
 * descriptor table here. Each op's functions live in a group file ir/ops/GROUP.c
 * that exports `const kn_opimpl kn_ops_GROUP[]` (terminated by {KN_OP_COUNT});
 * KN_OP_GROUPS below lists the groups. Nothing else switches on op kinds.
 *
 * infer: checks attributes and input types and computes output types. It runs
 *   statically (shape pass: in[i]->data is set only for constants, shapes may hold
 *   -1 dims or rank -1) and at run time in the interpreter (every input has data),
 *   so an op's shape logic is written once. in[i] is NULL for an omitted optional
 *   input. When a needed input's data or rank is unknown, set the output to an
 *   unknown type (kn_type_unknown) rather than failing. out has n->nout entries,
 *   all zeroed (kind tensor) on entry; set every one, even for omitted outputs.
 * eval: the reference implementation, plain and obviously correct. out[j] is
 *   pre-allocated (zeroed) from infer's type when that type is a static tensor;
 *   otherwise out[j] is NULL and eval creates it with kn_exec_tensor() or
 *   kn_tensor_typed(kn_exec_arena(ex), ...). */
#ifndef KN_OPS_H
#define KN_OPS_H

#include "ir/graph.h"

#include <string.h>

enum {
    OPF_ELEMWISE = 1 << 0,        /* output element i depends on input element i only */
    OPF_COMMUTATIVE = 1 << 1,     /* inputs may be reordered */
    OPF_FUSE_HEAD = 1 << 2,       /* its lowering applies a fused epilogue (ir/epilogue.h) */
    OPF_WEIGHTS = 1 << 3,         /* usually has constant weight inputs */
    OPF_SUBGRAPH = 1 << 4,        /* has graph attributes */
    OPF_SHAPE_FROM_DATA = 1 << 5, /* output shape may depend on input values */
    OPF_RANDOM = 1 << 6,          /* nondeterministic: never constant-folded */
    OPF_SHAPE_ONLY = 1 << 7,      /* reads only its input's type, not its data */
    OPF_STRINGS = 1 << 8,         /* its lowering handles string tensors (others refuse them) */
    OPF_NARROW = 1 << 9,          /* takes float8 and 4-bit tensors (ir/dtype.h; others refuse) */
};

typedef struct kn_exec kn_exec; /* interpreter state (ir/interp.h) */

typedef kn_status (*kn_infer_fn)(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out);
typedef kn_status (*kn_eval_fn)(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                kn_tensor **out);

/* Lowering to the kernel IR (ir/kir.h): builds the node's kernel. */
typedef struct kn_lower kn_lower;
typedef struct kn_kbuf kn_kbuf;
typedef kn_status (*kn_lower_fn)(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                 kn_kbuf *const *out);

typedef struct kn_opimpl {
    kn_op op;
    kn_infer_fn infer;
    kn_eval_fn eval;
} kn_opimpl;

typedef struct kn_opdesc {
    const char *domain, *name;
    int min_in, max_in, min_out, max_out;
    unsigned flags;
    kn_infer_fn infer; /* NULL: not implemented yet */
    kn_eval_fn eval;
    kn_lower_fn lower; /* NULL: code generators refuse the op */
} kn_opdesc;

/* Lowerings are registered like the interpreter functions, by group files
 * ir/lower/GROUP.c exporting `const kn_oplower kn_lower_GROUP[]` ({KN_OP_COUNT}-ended). */
typedef struct kn_oplower {
    kn_op op;
    kn_lower_fn lower;
} kn_oplower;

#define KN_LOWER_GROUPS(X)                                                                         \
    X(elementwise)                                                                                 \
    X(tensor) X(nn) X(reduce) X(quant) X(rnn) X(image) X(signal) X(misc) X(control) X(string)

#define X(g) extern const kn_oplower kn_lower_##g[];
KN_LOWER_GROUPS(X)
#undef X

#define KN_OP_GROUPS(X)                                                                            \
    X(unary)                                                                                       \
    X(binary)                                                                                      \
    X(tensor)                                                                                      \
    X(index)                                                                                       \
    X(nn)                                                                                          \
    X(nn_norm)                                                                                     \
    X(reduce)                                                                                      \
    X(quant)                                                                                       \
    X(rnn)                                                                                         \
    X(control)                                                                                     \
    X(signal)                                                                                      \
    X(image)                                                                                       \
    X(misc)

#define X(g) extern const kn_opimpl kn_ops_##g[];
KN_OP_GROUPS(X)
#undef X

const kn_opdesc *kn_op_desc(kn_op op);
/* n's infer function, behind the check every caller needs: a float8 or 4-bit tensor
 * (ir/dtype.h) among the inputs or outputs of an op without OPF_NARROW is refused
 * (KN_EUNSUPPORTED), naming the node, the value and the type. */
kn_status kn_op_infer(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out);

/* The op for (domain, name); domain "ai.onnx" is the same as "". KN_OP_COUNT if unknown. */
kn_op kn_op_lookup(const char *domain, const char *name);

/* ---- Static inference (ir/infer.c) ---- */

/* Infers the output types of node n alone from its inputs' types and constant data
 * (scratch tensors in a). */
kn_status kn_infer_node(kn_ctx *cx, kn_node *n, kn_arena *a);
/* Infers every node of g in order (subgraphs when their node's infer asks). */
kn_status kn_infer_graph(kn_ctx *cx, kn_graph *g);
/* Why tensor v's shape is not static, for messages: the node where it first became
 * unknown (a data-dependent op, or a graph input with unfixed dims) and the chain of
 * nodes from there to v, as "it first becomes unknown at node 'nz' (NonZero), ...;
 * then 'a' (Transpose) -> 'b' (Reshape)". */
void kn_shape_why(const kn_value *v, char *buf, size_t cap);

/* ---- The interpreter, as seen from an op's eval ---- */

kn_ctx *kn_exec_ctx(kn_exec *ex);
/* Arena for output tensors and scratch memory of this run. */
kn_arena *kn_exec_arena(kn_exec *ex);
/* New zeroed tensor; reports "tensor too large" against n and returns NULL on failure. */
kn_tensor *kn_exec_tensor(kn_exec *ex, const kn_node *n, kn_dtype t, int rank, const int64_t *dims);
/* Runs subgraph body with the given inputs (body->nin of them); sets out[0..body->nout).
 * Outer-scope values are visible. */
kn_status kn_exec_subgraph(kn_exec *ex, const kn_graph *body, kn_tensor *const *in,
                           kn_tensor **out);
/* Deterministic random stream for OPF_RANDOM ops: uniform in [0, 1). */
double kn_exec_random(kn_exec *ex);

/* ---- Helpers for op implementations ---- */

/* Broadcast shapes of in[0..n) (NULL entries skipped) numpy-style into out (dtype
 * untouched). Unknown dims broadcast to unknown. Reports incompatible shapes. */
kn_status kn_broadcast(kn_ctx *cx, const kn_node *nd, int n, const kn_type *const *in,
                       kn_type *out);
/* Strides of `in` viewed at the output shape (rank orank, dims odims): 0 on broadcast
 * dims. strides has orank entries. */
void kn_bcast_strides(const kn_type *in, int orank, const int64_t *odims, int64_t *strides);
/* Whether r broadcasts to y's shape without growing it (numpy rules, r's dims aligned
 * to y's last ones, each 1 or equal); false unless both shapes are static. */
bool kn_bcast_into(const kn_type *r, const kn_type *y);
/* Offset into an input for flat output index i, given its kn_bcast_strides. */
int64_t kn_bcast_offset(int64_t i, int orank, const int64_t *odims, const int64_t *strides);
/* Row-major strides of a shape. */
void kn_strides(int rank, const int64_t *dims, int64_t *strides);

/* Normalize axis in [-rank, rank) (or [-rank-1, rank] when extra=1) to >= 0. */
kn_status kn_axis(kn_ctx *cx, const kn_node *n, int64_t axis, int rank, int extra, int *out);
/* Sequence position p (the integer scalar t, input i) normalized into [0, len), or
 * [0, len] with extra=1 (an insert position). */
kn_status kn_seq_pos(kn_ctx *cx, const kn_node *n, const kn_tensor *t, int i, int len, int extra,
                     int *out);
/* SplitToSequence's pieces (in[0]'s type and in[1]'s data are read): sizes[0..*cnt)
 * along the normalized *axis; *squeeze when the axis is dropped (no split input and
 * keepdims=0). */
kn_status kn_split_plan(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_arena *a, int *axis,
                        int64_t **sizes, int64_t *cnt, bool *squeeze);
/* Pad-18's pads for the listed axes (np = 2 * na values) spread into pads[0..2r) for
 * every axis of rank r, 0 for the others. */
kn_status kn_pad_axes(kn_ctx *cx, const kn_node *n, int r, const int64_t *axes, int na,
                      int64_t *pads, int np);
/* Copies of a tensor's elements converted to int64/double, allocated in a. */
int64_t *kn_tensor_i64s(kn_arena *a, const kn_tensor *t);
double *kn_tensor_f64s(kn_arena *a, const kn_tensor *t);
/* Stores v[0..numel) into t, converting to its dtype. */
void kn_tensor_store_f64s(kn_tensor *t, const double *v);
void kn_tensor_store_i64s(kn_tensor *t, const int64_t *v);

/* Input i, or NULL when omitted (trailing omitted inputs are not in `in`). */
kn_tensor *kn_opt_in(const kn_node *n, kn_tensor *const *in, int i);
/* True if t is a tensor whose values and shape are known. */
bool kn_data_known(const kn_tensor *t);
/* Product of dims[from..to); 1 when the range is empty. */
int64_t kn_prod(const int64_t *dims, int from, int to);
/* Product of dims[from..to), -1 if one of them is unknown. */
int64_t kn_prod_or_unknown(const int64_t *dims, int from, int to);
/* Size in bytes of one element of dtype t. */
size_t kn_elem_size(kn_dtype t);
/* Copies element si of src to element di of dst, es bytes each. */
void kn_copy_elem(void *dst, int64_t di, const void *src, int64_t si, size_t es);
/* Copies all of src's elements into dst (same element count and dtype). */
void kn_copy_all(kn_tensor *dst, const kn_tensor *src);
/* Element i of t converted to double; kn_tensor_set_f64 stores v converted to t's dtype. */
double kn_tensor_get_f64(const kn_tensor *t, int64_t i);
void kn_tensor_set_f64(kn_tensor *t, int64_t i, double v);
/* Estimated floating-point operations of one run of n, from its static types:
 * contractions (Conv, ConvTranspose, MatMul, Gemm and their integer forms) count 2 per
 * multiply-add plus 1 per output element for a bias (Conv's B, Gemm's C), elementwise
 * ops 1 per output element, other ops and unknown shapes 0. */
int64_t kn_node_flops(const kn_node *n);
/* Equality of a and b ignoring ASCII case. */
bool kn_str_eq_nocase(const char *a, const char *b);

/* eval helpers */
/* Creates each out[j] handed to eval as NULL from the types infer gives for the actual
 * inputs; reports an output whose type is still not static. */
kn_status kn_alloc_outputs(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out,
                           kn_infer_fn infer);
/* out[j], first created from t when not pre-allocated; NULL (reported) when too large. */
kn_tensor *kn_ensure_output(kn_exec *ex, const kn_node *n, kn_tensor **out, int j,
                            const kn_type *t);

/* infer helpers */
kn_status kn_infer_same(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out);
/* Requires input i to be present and a tensor. */
kn_status kn_need_tensor(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, int i);
/* Requires in[i] to be a tensor whose dtype is one of mask (bit per kn_dtype). */
kn_status kn_check_dtype(kn_ctx *cx, const kn_node *n, const kn_tensor *in, int i, unsigned mask);
#define KN_DT(t) (1u << KN_##t)
#define KN_DT_FLOAT (KN_DT(F32) | KN_DT(F64) | KN_DT(F16) | KN_DT(BF16))
#define KN_DT_SINT (KN_DT(I8) | KN_DT(I16) | KN_DT(I32) | KN_DT(I64))
#define KN_DT_UINT (KN_DT(U8) | KN_DT(U16) | KN_DT(U32) | KN_DT(U64))
#define KN_DT_INT (KN_DT_SINT | KN_DT_UINT)
#define KN_DT_NUM (KN_DT_FLOAT | KN_DT_INT)
#define KN_DT_F8 (KN_DT(F8E4M3FN) | KN_DT(F8E4M3FNUZ) | KN_DT(F8E5M2) | KN_DT(F8E5M2FNUZ))
#define KN_DT_4BIT (KN_DT(U4) | KN_DT(I4))
/* Includes the narrow types: only OPF_NARROW ops see them (kn_op_infer). */
#define KN_DT_ANY (KN_DT_NUM | KN_DT(BOOL) | KN_DT(STRING) | KN_DT_F8 | KN_DT_4BIT)

#endif
