/* Types and tensors.
 *
 * kn_type describes a value: a tensor (dtype + shape), a sequence of tensors or an
 * optional. Shapes may be partly unknown during static inference: rank -1 means
 * unknown rank, a dim of -1 an unknown extent, optionally named by sym[] (an ONNX
 * dim_param, fixed later with --dim NAME=VALUE).
 *
 * kn_tensor is a type plus data: dense, row-major, no strides. data == NULL means
 * "not known at compile time" (the shape pass sees such tensors); the interpreter
 * always has data. String tensors hold `char *` elements (NUL-terminated, owned by
 * the same arena as the tensor). Sequences hold `items`; an optional holds zero or
 * one item. Tensors never own memory: their arena does. */
#ifndef KN_TENSOR_H
#define KN_TENSOR_H

#include "ir/arena.h"
#include "ir/dtype.h"

#include <stdbool.h>
#include <stdint.h>

#define KN_MAX_RANK 8
/* Arena regions a program may be planned in (kiln compile --memory) */
#define KN_MAX_REGIONS 4

typedef enum kn_kind { KN_KIND_TENSOR = 0, KN_KIND_SEQUENCE, KN_KIND_OPTIONAL } kn_kind;

typedef struct kn_type {
    kn_kind kind;
    kn_dtype dtype; /* tensor: element type; sequence/optional: of the element tensor */
    int rank;       /* -1 unknown */
    int64_t dims[KN_MAX_RANK];
    const char *sym[KN_MAX_RANK]; /* dim_param names, NULL if none; borrowed from the graph */
    kn_kind elem_kind;            /* optional: KN_KIND_TENSOR or KN_KIND_SEQUENCE held */
} kn_type;

typedef struct kn_tensor kn_tensor;
struct kn_tensor {
    kn_type type;
    void *data; /* numel * dtype size bytes; NULL if unknown */
    int nitems; /* sequence length, or 0/1 for an optional; -1 unknown */
    kn_tensor **items;
};

/* A tensor type of known shape. */
kn_type kn_type_make(kn_dtype t, int rank, const int64_t *dims);
static inline kn_type kn_type_scalar(kn_dtype t) {
    return kn_type_make(t, 0, 0);
}
/* Unknown-rank type of dtype t. */
kn_type kn_type_unknown(kn_dtype t);
/* True if rank and every dim are known. */
bool kn_type_static(const kn_type *t);
/* Element count; -1 if unknown or on overflow of int64. */
int64_t kn_type_numel(const kn_type *t);
/* Same kind, dtype and shape (unknown dims compare equal only to unknown). */
bool kn_type_equal(const kn_type *a, const kn_type *b);
/* "f32[1,3,224,224]", "seq(f32[?])", "f32[N,?]" into buf; returns buf. */
char *kn_type_str(const kn_type *t, char *buf, size_t cap);

/* New tensor of a static type, zeroed data allocated in a; NULL if too large (the
 * caller reports it). Strings start as "" (not NULL). */
kn_tensor *kn_tensor_new(kn_arena *a, const kn_type *t);
/* New tensor of dtype t with the given shape. */
kn_tensor *kn_tensor_make(kn_arena *a, kn_dtype t, int rank, const int64_t *dims);
/* Tensor with type only, no data (static shape inference). */
kn_tensor *kn_tensor_typed(kn_arena *a, const kn_type *t);
/* Deep copy into arena a. */
kn_tensor *kn_tensor_clone(kn_arena *a, const kn_tensor *src);
static inline int64_t kn_tensor_numel(const kn_tensor *t) {
    return kn_type_numel(&t->type);
}
static inline size_t kn_tensor_nbytes(const kn_tensor *t) {
    return (size_t)kn_type_numel(&t->type) * kn_dtype_get(t->type.dtype)->size;
}
/* Scalar tensor helpers. */
kn_tensor *kn_tensor_scalar_f64(kn_arena *a, kn_dtype t, double v);
kn_tensor *kn_tensor_scalar_i64(kn_arena *a, kn_dtype t, int64_t v);

#endif
