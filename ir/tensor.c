/* kn_type and kn_tensor helpers. */
#include "ir/tensor.h"
#include "ir/diag.h"

#include <stdio.h>
#include <string.h>

kn_type kn_type_make(kn_dtype t, int rank, const int64_t *dims) {
    kn_type ty;
    memset(&ty, 0, sizeof ty);
    KN_ASSERT(rank >= 0 && rank <= KN_MAX_RANK);
    ty.kind = KN_KIND_TENSOR;
    ty.dtype = t;
    ty.rank = rank;
    for (int i = 0; i < rank; i++) ty.dims[i] = dims[i];
    return ty;
}

kn_type kn_type_unknown(kn_dtype t) {
    kn_type ty;
    memset(&ty, 0, sizeof ty);
    ty.dtype = t;
    ty.rank = -1;
    return ty;
}

bool kn_type_static(const kn_type *t) {
    if (t->kind != KN_KIND_TENSOR || t->rank < 0) return false;
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] < 0) return false;
    return true;
}

int64_t kn_type_numel(const kn_type *t) {
    if (t->rank < 0) return -1;
    int64_t n = 1;
    for (int i = 0; i < t->rank; i++) {
        if (t->dims[i] < 0) return -1;
        if (t->dims[i] && n > INT64_MAX / t->dims[i]) return -1;
        n *= t->dims[i];
    }
    return n;
}

bool kn_type_equal(const kn_type *a, const kn_type *b) {
    if (a->kind != b->kind || a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

char *kn_type_str(const kn_type *t, char *buf, size_t cap) {
    size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__))
    if (t->kind == KN_KIND_SEQUENCE) PUT("seq(");
    if (t->kind == KN_KIND_OPTIONAL) PUT(t->elem_kind == KN_KIND_SEQUENCE ? "opt(seq(" : "opt(");
    PUT("%s", kn_dtype_name(t->dtype));
    if (t->rank < 0) {
        PUT("[*]");
    } else {
        PUT("[");
        for (int i = 0; i < t->rank; i++) {
            if (i) PUT(",");
            if (t->dims[i] >= 0)
                PUT("%lld", (long long)t->dims[i]);
            else
                PUT("%s", t->sym[i] ? t->sym[i] : "?");
        }
        PUT("]");
    }
    if (t->kind == KN_KIND_OPTIONAL && t->elem_kind == KN_KIND_SEQUENCE) PUT(")");
    if (t->kind != KN_KIND_TENSOR) PUT(")");
#undef PUT
    if (cap) buf[n < cap ? n : cap - 1] = 0;
    return buf;
}

kn_tensor *kn_tensor_typed(kn_arena *a, const kn_type *t) {
    kn_tensor *x = kn_arena_alloc(a, sizeof *x);
    x->type = *t;
    x->nitems = t->kind == KN_KIND_TENSOR ? 0 : -1;
    return x;
}

kn_tensor *kn_tensor_new(kn_arena *a, const kn_type *t) {
    KN_ASSERT(t->kind == KN_KIND_TENSOR && kn_type_static(t));
    int64_t n = kn_type_numel(t);
    size_t es = kn_dtype_get(t->dtype)->size;
    if (n < 0 || es == 0) return NULL;
    kn_tensor *x = kn_tensor_typed(a, t);
    x->data = kn_arena_array(a, (size_t)n, es);
    if (!x->data) return NULL;
    if (t->dtype == KN_STRING) {
        char **s = x->data;
        for (int64_t i = 0; i < n; i++) s[i] = (char *)"";
    }
    return x;
}

kn_tensor *kn_tensor_make(kn_arena *a, kn_dtype t, int rank, const int64_t *dims) {
    kn_type ty = kn_type_make(t, rank, dims);
    return kn_tensor_new(a, &ty);
}

kn_tensor *kn_tensor_clone(kn_arena *a, const kn_tensor *src) {
    kn_tensor *x = kn_tensor_typed(a, &src->type);
    x->nitems = src->nitems;
    if (src->data) {
        size_t nb = kn_tensor_nbytes(src);
        x->data = kn_arena_alloc(a, nb);
        if (!x->data) return NULL;
        memcpy(x->data, src->data, nb);
        if (src->type.dtype == KN_STRING) {
            char **s = x->data;
            for (size_t i = 0; i < nb / sizeof(char *); i++) s[i] = kn_arena_strdup(a, s[i]);
        }
    }
    if (src->nitems > 0) {
        x->items = kn_arena_array(a, (size_t)src->nitems, sizeof *x->items);
        for (int i = 0; i < src->nitems; i++) x->items[i] = kn_tensor_clone(a, src->items[i]);
    }
    return x;
}

kn_tensor *kn_tensor_scalar_f64(kn_arena *a, kn_dtype t, double v) {
    kn_tensor *x = kn_tensor_make(a, t, 0, NULL);
    kn_store_f64(x->data, t, 0, v);
    return x;
}

kn_tensor *kn_tensor_scalar_i64(kn_arena *a, kn_dtype t, int64_t v) {
    kn_tensor *x = kn_tensor_make(a, t, 0, NULL);
    kn_store_i64(x->data, t, 0, v);
    return x;
}
