/* ONNX ModelProto -> kn_graph, TensorProto <-> kn_tensor.
 *
 * protobuf-c does the wire parsing (code generated at build time from the system's
 * onnx.proto); this file checks everything protobuf cannot: dtypes, ranks,
 * dimension products, data sizes against shapes, value definitions before use,
 * duplicate names, opsets, attribute kinds and external-data paths. The unpacked
 * protobuf is freed before returning; the graph owns copies in its arena. */
#include "frontend/onnx.h"
#include "frontend/onnx_contrib.h"
#include "ir/ops.h"
#include "passes/pass.h"

#include "onnx-data.pb-c.h"
#include "onnx.pb-c.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* An inlined call of a model-local function (see inline_call). */
typedef struct fn_scope {
    struct fn_scope *up; /* the caller's scope, NULL in the model's graph */
    const Onnx__FunctionProto *fp;
    const Onnx__NodeProto *call; /* its attributes answer ref_attr_name */
    const char *prefix;          /* "<call name>/": prefix of the body's own names */
    const char **actual_in;      /* the caller's value of each formal input ("" omitted) */
    const char **actual_out;     /* ... of each formal output a body node computes, or NULL */
} fn_scope;

typedef struct loader {
    kn_ctx *cx;
    kn_graph *root;
    const char *base_dir;       /* folder of the model, for external data; NULL refuses it */
    int depth;                  /* subgraph nesting */
    const Onnx__ModelProto *mp; /* for its functions; NULL when decoding values */
    fn_scope *fn;               /* innermost inlined function call, or NULL */
    int calls;                  /* function calls being inlined (nesting) */
    bool reordered;             /* some nodes were not in topological order */
    ProtobufCAllocator *alloc;  /* what unpacked mp (NULL: protobuf-c's malloc) */
    kn_arena *big;              /* or NULL; else where alloc put mp's big blocks */
    bool adopt;                 /* decoding an initializer: its data may take such a block */
} loader;

#define MAX_SUBGRAPH_DEPTH 64
/* Attributes on one node: real operators take a few dozen; the cap bounds the
 * quadratic duplicate check and the linear attribute lookups. */
#define MAX_NODE_ATTRS 1024

kn_status kn_read_file(kn_ctx *cx, const char *path, void **buf, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return kn_diag(cx, NULL, KN_EIO, "cannot open '%s': %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    struct stat st; /* a regular file is read into one exact allocation, not a doubling one */
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (unsigned long long)st.st_size < SIZE_MAX / 2)
        cap = (size_t)st.st_size + 1;
    unsigned char *p = malloc(cap);
    KN_ASSERT(p);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            p = realloc(p, cap);
            KN_ASSERT(p);
        }
        size_t r = fread(p + n, 1, cap - n, f);
        n += r;
        if (r == 0) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(p);
        return kn_diag(cx, NULL, KN_EIO, "cannot read '%s'", path);
    }
    *buf = p;
    *len = n;
    return KN_OK;
}

/* ---- tensors ---- */

/* Shape of a TensorProto, checked. */
static kn_status tensor_type(kn_ctx *cx, const kn_node *n, const Onnx__TensorProto *tp,
                             kn_type *t) {
    const char *name = tp->name ? tp->name : "";
    if (!tp->has_data_type || !kn_dtype_valid(tp->data_type)) {
        const char *tn = kn_onnx_type_name(tp->data_type);
        if (tn)
            return kn_diag(cx, n, KN_EUNSUPPORTED, "tensor '%s' has data type %s (%d): %s", name,
                           tn, (int)tp->data_type, KN_UNSUPPORTED_TYPES);
        return kn_diag(cx, n, KN_EUNSUPPORTED, "tensor '%s' has unsupported data type %d", name,
                       (int)tp->data_type);
    }
    if (tp->n_dims > KN_MAX_RANK)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "tensor '%s' has rank %zu, more than %d", name,
                       tp->n_dims, KN_MAX_RANK);
    for (size_t i = 0; i < tp->n_dims; i++)
        if (tp->dims[i] < 0)
            return kn_diag(cx, n, KN_EINVAL, "tensor '%s' has negative dimension %lld", name,
                           (long long)tp->dims[i]);
    *t = kn_type_make((kn_dtype)tp->data_type, (int)tp->n_dims, tp->dims);
    if (kn_type_numel(t) < 0)
        return kn_diag(cx, n, KN_EINVAL, "tensor '%s': product of dimensions overflows", name);
    return KN_OK;
}

static bool path_is_safe(const char *loc) {
    if (!loc[0] || loc[0] == '/') return false;
    for (const char *p = loc; *p;) { /* reject any ".." component */
        const char *e = strchr(p, '/');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == 2 && p[0] == '.' && p[1] == '.') return false;
        if (!e) break;
        p = e + 1;
    }
    return true;
}

/* Opens the external data of tp, refusing paths that leave base_dir, and checks that
 * the file holds nbytes at the given offset; on success *f is positioned there. */
static kn_status open_external(loader *L, const kn_node *n, const Onnx__TensorProto *tp,
                               size_t nbytes, FILE **f) {
    kn_ctx *cx = L->cx;
    const char *loc = NULL;
    long long offset = 0, length = -1;
    for (size_t i = 0; i < tp->n_external_data; i++) {
        const Onnx__StringStringEntryProto *e = tp->external_data[i];
        if (!e->key || !e->value) continue;
        char *end;
        if (!strcmp(e->key, "location"))
            loc = e->value;
        else if (!strcmp(e->key, "offset"))
            offset = strtoll(e->value, &end, 10);
        else if (!strcmp(e->key, "length"))
            length = strtoll(e->value, &end, 10);
    }
    const char *name = tp->name ? tp->name : "";
    if (!loc) return kn_diag(cx, n, KN_EINVAL, "tensor '%s': external data has no location", name);
    if (!L->base_dir)
        return kn_diag(cx, n, KN_EINVAL, "tensor '%s': external data needs a model file", name);
    if (!path_is_safe(loc))
        return kn_diag(cx, n, KN_EINVAL,
                       "tensor '%s': external data path '%s' leaves the model's folder", name, loc);
    if (offset < 0 || (length >= 0 && (size_t)length != nbytes))
        return kn_diag(cx, n, KN_EINVAL,
                       "tensor '%s': external data length %lld does not match its shape (%zu "
                       "bytes)",
                       name, length, nbytes);
    char path[PATH_MAX], real[PATH_MAX], realbase[PATH_MAX];
    if (snprintf(path, sizeof path, "%s/%s", L->base_dir, loc) >= (int)sizeof path)
        return kn_diag(cx, n, KN_EINVAL, "tensor '%s': external data path too long", name);
    if (!realpath(path, real))
        return kn_diag(cx, n, KN_EIO, "tensor '%s': cannot open external data '%s': %s", name, loc,
                       strerror(errno));
    if (!realpath(L->base_dir, realbase))
        return kn_diag(cx, n, KN_EIO, "cannot resolve folder '%s'", L->base_dir);
    size_t bl = strlen(realbase);
    if (strncmp(real, realbase, bl) || (real[bl] != '/' && real[bl] != 0))
        return kn_diag(cx, n, KN_EINVAL,
                       "tensor '%s': external data '%s' resolves outside the model's folder", name,
                       loc);
    *f = fopen(real, "rb");
    if (!*f)
        return kn_diag(cx, n, KN_EIO, "tensor '%s': cannot open external data '%s'", name, loc);
    long size = fseek(*f, 0, SEEK_END) == 0 ? ftell(*f) : -1;
    if (size < 0 || (unsigned long long)size < (unsigned long long)offset ||
        (unsigned long long)size - (unsigned long long)offset < nbytes ||
        fseek(*f, offset, SEEK_SET) != 0) {
        fclose(*f);
        *f = NULL;
        return kn_diag(cx, n, KN_EINVAL,
                       "tensor '%s': external data '%s' is shorter than its shape needs (%zu "
                       "bytes at offset %lld)",
                       name, loc, nbytes, offset);
    }
    return KN_OK;
}

/* Elements present in the data field of tp that its dtype uses (bytes for raw data). */
static size_t data_count(const Onnx__TensorProto *tp, kn_dtype dt) {
    if (dt == KN_STRING) return tp->n_string_data;
    if (tp->has_raw_data) return tp->raw_data.len;
    switch (dt) {
    case KN_F32: return tp->n_float_data;
    case KN_F64: return tp->n_double_data;
    case KN_I64: return tp->n_int64_data;
    case KN_U32:
    case KN_U64: return tp->n_uint64_data;
    default: return tp->n_int32_data; /* f16/bf16 bit patterns, i32, i16, i8, u16, u8, bool */
    }
}

/* Sizes are checked against the data present before anything is allocated, so a
 * small file cannot make the loader allocate a huge tensor. */
static kn_status decode_tensor(loader *L, const kn_node *n, kn_arena *a,
                               const Onnx__TensorProto *tp, kn_tensor **out) {
    kn_ctx *cx = L->cx;
    kn_type ty;
    if (tensor_type(cx, n, tp, &ty)) return cx->status;
    const char *name = tp->name ? tp->name : "";
    kn_dtype dt = ty.dtype;
    size_t numel = (size_t)kn_type_numel(&ty), esize = kn_dtype_get(dt)->size;
    if (numel > KN_ARENA_MAX_ALLOC / esize)
        return kn_diag(cx, n, KN_ELIMIT, "tensor '%s' is too large", name);
    size_t nbytes = numel * esize;
    /* 4-bit integers are packed two to a byte in the file (raw or external data, and
     * one packed byte per int32_data entry), element 2j in the low nibble of byte j */
    bool packed = kn_dtype_is_4bit(dt);
    size_t fbytes = packed ? (numel + 1) / 2 : nbytes, fcount = packed ? fbytes : numel;
    char buf[128];
    FILE *ext = NULL;
    if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        if (dt == KN_STRING)
            return kn_diag(cx, n, KN_EUNSUPPORTED, "tensor '%s': external string data", name);
        if (open_external(L, n, tp, fbytes, &ext)) return cx->status;
    } else if (dt != KN_STRING && tp->has_raw_data) {
        if (tp->raw_data.len != fbytes)
            return kn_diag(cx, n, KN_EINVAL,
                           "tensor '%s' has %zu bytes of raw data, its shape %s needs %zu", name,
                           tp->raw_data.len, kn_type_str(&ty, buf, sizeof buf), fbytes);
    } else if (data_count(tp, dt) != fcount) {
        return kn_diag(cx, n, KN_EINVAL,
                       "tensor '%s' has %zu elements of data, its shape %s needs %zu", name,
                       data_count(tp, dt), kn_type_str(&ty, buf, sizeof buf), fcount);
    }
    /* an initializer's raw data that protobuf-c unpacked into a block of its own
     * (kn_onnx_load_file): the tensor takes the block over instead of copying it (#16).
     * Only initializers: each is decoded once, then its data released (release_data). */
    void *blk = NULL;
    if (L->adopt && L->big && !packed && !ext && dt != KN_STRING && tp->has_raw_data && nbytes)
        blk = kn_arena_detach(L->big, tp->raw_data.data);
    if (blk) {
        kn_tensor *t = kn_tensor_typed(a, &ty);
        kn_arena_attach(a, blk);
        t->data = tp->raw_data.data;
        ((Onnx__TensorProto *)tp)->raw_data.data = NULL; /* the graph's now, not mp's */
        ((Onnx__TensorProto *)tp)->raw_data.len = 0;
        *out = t;
        return KN_OK;
    }
    kn_tensor *t = kn_tensor_new(a, &ty);
    if (!t) {
        if (ext) fclose(ext);
        return kn_diag(cx, n, KN_ELIMIT, "tensor '%s' is too large", name);
    }
    if (packed) { /* unpacked from the end, in place: byte j is read before it is written */
        uint8_t *p = t->data;
        if (ext) {
            size_t got = fread(p, 1, fbytes, ext);
            fclose(ext);
            if (got != fbytes)
                return kn_diag(cx, n, KN_EIO, "tensor '%s': cannot read its external data", name);
        } else {
            for (size_t j = 0; j < fbytes; j++)
                p[j] = tp->has_raw_data ? tp->raw_data.data[j] : (uint8_t)tp->int32_data[j];
        }
        for (size_t i = numel; i-- > 0;) kn_store_i64(p, dt, i, kn_i4_get(p, i, dt == KN_I4));
    } else if (ext) {
        size_t got = fread(t->data, 1, nbytes, ext);
        fclose(ext);
        if (got != nbytes)
            return kn_diag(cx, n, KN_EIO, "tensor '%s': cannot read its external data", name);
    } else if (dt == KN_STRING) {
        char **s = t->data;
        for (size_t i = 0; i < numel; i++)
            s[i] =
                kn_arena_strndup(a, (const char *)tp->string_data[i].data, tp->string_data[i].len);
    } else if (tp->has_raw_data) {
        if (nbytes) memcpy(t->data, tp->raw_data.data, nbytes);
    } else {
        switch (dt) {
        case KN_F32:
            if (numel) memcpy(t->data, tp->float_data, nbytes);
            break;
        case KN_F64:
            if (numel) memcpy(t->data, tp->double_data, nbytes);
            break;
        case KN_I64:
            if (numel) memcpy(t->data, tp->int64_data, nbytes);
            break;
        case KN_U32:
        case KN_U64:
            for (size_t i = 0; i < numel; i++) kn_store_u64(t->data, dt, i, tp->uint64_data[i]);
            break;
        case KN_F16:
        case KN_BF16: /* bit patterns in int32_data */
            for (size_t i = 0; i < numel; i++)
                ((uint16_t *)t->data)[i] = (uint16_t)tp->int32_data[i];
            break;
        case KN_F8E4M3FN:
        case KN_F8E4M3FNUZ:
        case KN_F8E5M2:
        case KN_F8E5M2FNUZ: /* codes in int32_data */
            for (size_t i = 0; i < numel; i++) ((uint8_t *)t->data)[i] = (uint8_t)tp->int32_data[i];
            break;
        default: /* i32, i16, i8, u16, u8, bool */
            for (size_t i = 0; i < numel; i++) kn_store_i64(t->data, dt, i, tp->int32_data[i]);
            break;
        }
    }
    *out = t;
    return KN_OK;
}

static void pb_free(const loader *L, void *p) {
    if (!L->alloc)
        free(p); /* protobuf-c's default allocator is malloc */
    else if (p)
        L->alloc->free(L->alloc->allocator_data, p);
}

/* Frees the data arrays of an unpacked tensor once decoded, through the allocator that
 * unpacked them; free_unpacked skips the NULL pointers left behind. */
static void release_data(const loader *L, Onnx__TensorProto *tp) {
    pb_free(L, tp->raw_data.data);
    tp->raw_data.data = NULL;
    tp->raw_data.len = 0;
    pb_free(L, tp->float_data), pb_free(L, tp->double_data), pb_free(L, tp->int32_data);
    pb_free(L, tp->int64_data), pb_free(L, tp->uint64_data);
    tp->float_data = NULL, tp->double_data = NULL, tp->int32_data = NULL, tp->int64_data = NULL;
    tp->uint64_data = NULL;
    tp->n_float_data = tp->n_double_data = tp->n_int32_data = tp->n_int64_data = 0;
    tp->n_uint64_data = 0;
}

/* A SparseTensorProto as a dense tensor: zeros of its dims with `values` scattered at
 * `indices` (NNZ linear indices, or an NNZ x rank array of coordinates). */
static kn_status densify(loader *L, const kn_node *n, kn_arena *a,
                         const Onnx__SparseTensorProto *sp, kn_tensor **out) {
    kn_ctx *cx = L->cx;
    if (!sp->values || !sp->indices)
        return kn_diag(cx, n, KN_EINVAL, "a sparse tensor needs values and indices");
    const char *name = sp->values->name ? sp->values->name : "";
    kn_tensor *vals, *idx;
    if (decode_tensor(L, n, a, sp->values, &vals) || decode_tensor(L, n, a, sp->indices, &idx))
        return cx->status;
    Onnx__TensorProto dense = ONNX__TENSOR_PROTO__INIT; /* for tensor_type's checks */
    dense.name = (char *)name;
    dense.has_data_type = 1;
    dense.data_type = vals->type.dtype;
    dense.n_dims = sp->n_dims;
    dense.dims = sp->dims;
    kn_type ty;
    if (tensor_type(cx, n, &dense, &ty)) return cx->status;
    int64_t numel = kn_type_numel(&ty), nnz = kn_tensor_numel(vals);
    size_t es = kn_dtype_get(ty.dtype)->size;
    if (ty.dtype == KN_STRING)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "sparse tensor '%s' holds strings", name);
    if ((size_t)numel > KN_ARENA_MAX_ALLOC / es)
        return kn_diag(cx, n, KN_ELIMIT, "tensor '%s' is too large", name);
    bool coords = idx->type.rank == 2 && idx->type.dims[1] == ty.rank;
    if (idx->type.dtype != KN_I64 || vals->type.rank != 1 || !(coords || (idx->type.rank == 1)) ||
        idx->type.dims[0] != nnz)
        return kn_diag(cx, n, KN_EINVAL,
                       "sparse tensor '%s': indices must be int64 [NNZ] or [NNZ, rank] for %lld "
                       "values",
                       name, (long long)nnz);
    kn_tensor *t = kn_tensor_new(a, &ty);
    if (!t) return kn_diag(cx, n, KN_ELIMIT, "tensor '%s' is too large", name);
    const int64_t *ix = idx->data;
    for (int64_t k = 0; k < nnz; k++) {
        int64_t at = 0;
        if (coords) {
            for (int d = 0; d < ty.rank; d++) {
                int64_t c = ix[k * ty.rank + d];
                if (c < 0 || c >= ty.dims[d]) at = -1;
                if (at >= 0) at = at * ty.dims[d] + c;
            }
        } else {
            at = ix[k];
        }
        if (at < 0 || at >= numel)
            return kn_diag(cx, n, KN_EINVAL, "sparse tensor '%s': index %lld is out of range", name,
                           (long long)k);
        memcpy((char *)t->data + (size_t)at * es, (char *)vals->data + (size_t)k * es, es);
    }
    *out = t;
    return KN_OK;
}

/* ---- types ---- */

static kn_status convert_type(loader *L, const kn_node *n, const char *what,
                              const Onnx__TypeProto *tp, kn_type *t) {
    kn_ctx *cx = L->cx;
    *t = kn_type_unknown(KN_UNDEF);
    if (!tp) return KN_OK;
    switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: {
        const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
        if (tt->has_elem_type && tt->elem_type && !kn_dtype_valid(tt->elem_type)) {
            const char *tn = kn_onnx_type_name(tt->elem_type);
            if (tn)
                return kn_diag(cx, n, KN_EUNSUPPORTED, "%s has element type %s (%d): %s", what, tn,
                               (int)tt->elem_type, KN_UNSUPPORTED_TYPES);
            return kn_diag(cx, n, KN_EUNSUPPORTED, "%s has unsupported element type %d", what,
                           (int)tt->elem_type);
        }
        t->dtype = (kn_dtype)tt->elem_type;
        if (!tt->shape) return KN_OK;
        if (tt->shape->n_dim > KN_MAX_RANK)
            return kn_diag(cx, n, KN_EUNSUPPORTED, "%s has rank %zu, more than %d", what,
                           tt->shape->n_dim, KN_MAX_RANK);
        t->rank = (int)tt->shape->n_dim;
        for (int i = 0; i < t->rank; i++) {
            const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
            t->dims[i] = -1;
            /* -1 is how paddle2onnx writes a dynamic dim; ONNX Runtime reads it as one */
            if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                d->dim_value != -1) {
                if (d->dim_value < 0)
                    return kn_diag(cx, n, KN_EINVAL, "%s has negative dimension %lld", what,
                                   (long long)d->dim_value);
                t->dims[i] = d->dim_value;
            } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                       d->dim_param[0]) {
                t->sym[i] = kn_arena_strdup(L->root->arena, d->dim_param);
            }
        }
        if (kn_type_static(t) && kn_type_numel(t) < 0)
            return kn_diag(cx, n, KN_EINVAL, "%s: product of dimensions overflows", what);
        return KN_OK;
    }
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: {
        kn_type e;
        if (convert_type(L, n, what, tp->sequence_type->elem_type, &e)) return cx->status;
        if (e.kind != KN_KIND_TENSOR)
            return kn_diag(cx, n, KN_EUNSUPPORTED, "%s: sequences of non-tensors", what);
        *t = e;
        t->kind = KN_KIND_SEQUENCE;
        return KN_OK;
    }
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: {
        kn_type e;
        if (convert_type(L, n, what, tp->optional_type->elem_type, &e)) return cx->status;
        if (e.kind == KN_KIND_OPTIONAL)
            return kn_diag(cx, n, KN_EUNSUPPORTED, "%s: optional of optional", what);
        *t = e;
        t->elem_kind = e.kind;
        t->kind = KN_KIND_OPTIONAL;
        return KN_OK;
    }
    case ONNX__TYPE_PROTO__VALUE__NOT_SET: return KN_OK;
    default: return kn_diag(cx, n, KN_EUNSUPPORTED, "%s has a map or sparse type", what);
    }
}

/* ---- graphs ---- */

static kn_status load_graph(loader *L, const Onnx__GraphProto *gp, kn_graph *g);

/* The name `name` (from the file) stands for in the graph being built: itself, or
 * inside an inlined function call, the caller's value for a formal input or output
 * and "<prefix><name>" for the function's internal values. "" stays "". */
static const char *nm(loader *L, const char *name) {
    const fn_scope *f = L->fn;
    if (!name || !name[0] || !f) return name ? name : "";
    for (size_t i = 0; i < f->fp->n_input; i++)
        if (!strcmp(f->fp->input[i], name)) return f->actual_in[i];
    for (size_t i = 0; i < f->fp->n_output; i++)
        if (f->actual_out[i] && !strcmp(f->fp->output[i], name)) return f->actual_out[i];
    size_t pl = strlen(f->prefix), nl = strlen(name);
    char *s = kn_arena_alloc(L->root->arena, pl + nl + 1);
    KN_ASSERT(s);
    memcpy(s, f->prefix, pl);
    memcpy(s + pl, name, nl + 1);
    return s;
}

static kn_attr_kind attr_kind(const Onnx__AttributeProto *ap) {
    if (ap->has_type && ap->type) return (kn_attr_kind)ap->type;
    /* IR version < 2 has no type field: infer it from the field that is set. */
    if (ap->n_floats) return KN_ATTR_FLOATS;
    if (ap->n_ints) return KN_ATTR_INTS;
    if (ap->n_strings) return KN_ATTR_STRINGS;
    if (ap->n_tensors) return KN_ATTR_TENSORS;
    if (ap->n_graphs) return KN_ATTR_GRAPHS;
    if (ap->has_f) return KN_ATTR_FLOAT;
    if (ap->has_i) return KN_ATTR_INT;
    if (ap->has_s) return KN_ATTR_STRING;
    if (ap->t) return KN_ATTR_TENSOR;
    if (ap->g) return KN_ATTR_GRAPH;
    if (ap->sparse_tensor) return KN_ATTR_SPARSE_TENSOR;
    return (kn_attr_kind)0;
}

static kn_status densify(loader *L, const kn_node *n, kn_arena *a,
                         const Onnx__SparseTensorProto *sp, kn_tensor **out);

/* The attribute a function body's attribute `ap` refers to (ref_attr_name): the
 * caller's attribute of that name, else the function's default, else NULL (the
 * attribute is then omitted). *scope is the function scope it is read in. */
static const Onnx__AttributeProto *ref_attr(const loader *L, const Onnx__AttributeProto *ap,
                                            fn_scope **scope) {
    fn_scope *f = L->fn;
    if (!f) return NULL;
    for (size_t i = 0; i < f->call->n_attribute; i++)
        if (f->call->attribute[i]->name &&
            !strcmp(f->call->attribute[i]->name, ap->ref_attr_name)) {
            *scope = f->up;
            return f->call->attribute[i];
        }
    for (size_t i = 0; i < f->fp->n_attribute_proto; i++)
        if (f->fp->attribute_proto[i]->name &&
            !strcmp(f->fp->attribute_proto[i]->name, ap->ref_attr_name)) {
            *scope = f;
            return f->fp->attribute_proto[i];
        }
    return NULL;
}

/* Loads attribute ap into a. Inside an inlined function, an attribute referring to
 * one of the function's attributes takes the caller's value (or the default); when
 * there is none, a->name stays NULL and the caller drops the attribute. */
static kn_status load_attr(loader *L, kn_node *n, const Onnx__AttributeProto *ap, kn_attr *a) {
    kn_ctx *cx = L->cx;
    kn_arena *ar = L->root->arena;
    if (!ap->name || !ap->name[0]) return kn_diag(cx, n, KN_EINVAL, "attribute without a name");
    if (ap->ref_attr_name && ap->ref_attr_name[0]) {
        if (!L->fn)
            return kn_diag(cx, n, KN_EINVAL,
                           "attribute '%s' refers to a function attribute outside a function",
                           ap->name);
        fn_scope *scope = NULL, *saved = L->fn;
        const Onnx__AttributeProto *ref = ref_attr(L, ap, &scope);
        if (!ref) return KN_OK; /* not given and no default: omitted */
        L->fn = scope;
        kn_status st = load_attr(L, n, ref, a);
        L->fn = saved;
        if (!st) a->name = kn_arena_strdup(ar, ap->name);
        return st;
    }
    a->name = kn_arena_strdup(ar, ap->name);
    a->kind = attr_kind(ap);
    switch (a->kind) {
    case KN_ATTR_FLOAT: a->f = ap->f; break;
    case KN_ATTR_INT: a->i = ap->i; break;
    case KN_ATTR_STRING:
        a->s = kn_arena_strndup(ar, (const char *)ap->s.data, ap->s.len);
        a->slen = ap->s.len;
        break;
    case KN_ATTR_TENSOR:
        if (!ap->t) return kn_diag(cx, n, KN_EINVAL, "attribute '%s' has no tensor", ap->name);
        return decode_tensor(L, n, ar, ap->t, &a->t);
    case KN_ATTR_SPARSE_TENSOR: /* Constant's sparse_value: densified */
        if (!ap->sparse_tensor)
            return kn_diag(cx, n, KN_EINVAL, "attribute '%s' has no sparse tensor", ap->name);
        a->kind = KN_ATTR_TENSOR;
        return densify(L, n, ar, ap->sparse_tensor, &a->t);
    case KN_ATTR_GRAPH: {
        if (!ap->g) return kn_diag(cx, n, KN_EINVAL, "attribute '%s' has no graph", ap->name);
        if (L->depth > MAX_SUBGRAPH_DEPTH)
            return kn_diag(cx, n, KN_ELIMIT, "attribute '%s': subgraphs nested deeper than %d",
                           ap->name, MAX_SUBGRAPH_DEPTH);
        a->g = kn_graph_create_sub(n->graph, ap->name);
        return load_graph(L, ap->g, a->g);
    }
    case KN_ATTR_FLOATS:
        a->n = (int)ap->n_floats;
        a->floats = kn_arena_array(ar, ap->n_floats + 1, sizeof(float));
        if (!a->floats) return kn_diag(cx, n, KN_ELIMIT, "attribute '%s' too large", ap->name);
        if (a->n) memcpy(a->floats, ap->floats, ap->n_floats * sizeof(float));
        break;
    case KN_ATTR_INTS:
        a->n = (int)ap->n_ints;
        a->ints = kn_arena_array(ar, ap->n_ints + 1, sizeof(int64_t));
        if (!a->ints) return kn_diag(cx, n, KN_ELIMIT, "attribute '%s' too large", ap->name);
        if (a->n) memcpy(a->ints, ap->ints, ap->n_ints * sizeof(int64_t));
        break;
    case KN_ATTR_STRINGS:
        a->n = (int)ap->n_strings;
        a->strings = kn_arena_array(ar, ap->n_strings + 1, sizeof(char *));
        for (size_t i = 0; i < ap->n_strings; i++)
            a->strings[i] =
                kn_arena_strndup(ar, (const char *)ap->strings[i].data, ap->strings[i].len);
        break;
    case KN_ATTR_TENSORS:
        a->n = (int)ap->n_tensors;
        a->tensors = kn_arena_array(ar, ap->n_tensors + 1, sizeof(kn_tensor *));
        for (size_t i = 0; i < ap->n_tensors; i++)
            if (decode_tensor(L, n, ar, ap->tensors[i], &a->tensors[i])) return cx->status;
        break;
    case KN_ATTR_GRAPHS:
        a->n = (int)ap->n_graphs;
        a->graphs = kn_arena_array(ar, ap->n_graphs + 1, sizeof(kn_graph *));
        if (ap->n_graphs && L->depth > MAX_SUBGRAPH_DEPTH)
            return kn_diag(cx, n, KN_ELIMIT, "attribute '%s': subgraphs nested deeper than %d",
                           ap->name, MAX_SUBGRAPH_DEPTH);
        for (size_t i = 0; i < ap->n_graphs; i++) {
            a->graphs[i] = kn_graph_create_sub(n->graph, ap->name);
            if (load_graph(L, ap->graphs[i], a->graphs[i])) return cx->status;
        }
        break;
    case KN_ATTR_TYPE_PROTO:
        if (convert_type(L, n, ap->name, ap->tp, &a->tp)) return cx->status;
        break;
    default:
        return kn_diag(cx, n, KN_EUNSUPPORTED, "attribute '%s' has unsupported type %d", ap->name,
                       (int)a->kind);
    }
    return KN_OK;
}

static bool domain_known(const char *domain) {
    return !domain[0] || !strcmp(domain, "ai.onnx") || !strcmp(domain, "ai.onnx.ml") ||
           !strcmp(domain, "ai.onnx.preview.training");
}

/* Whether the model (or an enclosing function) imports an opset of `domain`. */
static bool model_imports(const loader *L, const char *domain) {
    for (const fn_scope *f = L->fn; f; f = f->up)
        for (size_t i = 0; i < f->fp->n_opset_import; i++)
            if (f->fp->opset_import[i]->domain && !strcmp(f->fp->opset_import[i]->domain, domain))
                return true;
    for (size_t i = 0; L->mp && i < L->mp->n_opset_import; i++)
        if (L->mp->opset_import[i]->domain && !strcmp(L->mp->opset_import[i]->domain, domain))
            return true;
    return false;
}

/* Opset version of `domain` for a node: the inlined function's own import when it
 * has one, else the model's. */
static int node_opset(const loader *L, const kn_graph *g, const char *domain) {
    bool onnx = !domain[0] || !strcmp(domain, "ai.onnx");
    for (const fn_scope *f = L->fn; f; f = f->up)
        for (size_t i = 0; i < f->fp->n_opset_import; i++) {
            const Onnx__OperatorSetIdProto *o = f->fp->opset_import[i];
            const char *d = o->domain ? o->domain : "";
            if ((onnx && (!d[0] || !strcmp(d, "ai.onnx"))) || (!onnx && !strcmp(d, domain))) {
                if (o->has_version && o->version > 0 && o->version <= INT_MAX)
                    return (int)o->version;
            }
        }
    if (onnx) return g->opset;
    if (!strcmp(domain, "ai.onnx.ml")) return g->opset_ml;
    if (!strcmp(domain, "ai.onnx.preview.training")) return g->opset_training;
    return 0;
}

/* A value name defined in g itself (not enclosing graphs). */
static kn_value *find_local(const kn_graph *g, const char *name) {
    for (int i = g->nvalues - 1; i >= 0; i--)
        if (!strcmp(g->values[i]->name, name)) return g->values[i];
    return NULL;
}

/* The model-local function (domain, name), or NULL. */
static const Onnx__FunctionProto *find_function(const loader *L, const char *domain,
                                                const char *name) {
    for (size_t i = 0; L->mp && i < L->mp->n_functions; i++) {
        const Onnx__FunctionProto *f = L->mp->functions[i];
        const char *d = f->domain ? f->domain : "";
        if (f->name && !strcmp(f->name, name) && !strcmp(d, domain)) return f;
    }
    return NULL;
}

static kn_status load_nodes(loader *L, kn_graph *g, Onnx__NodeProto *const *nodes, size_t count);

/* Inlines a call of model-local function fp: its nodes are loaded into g with the
 * formal inputs and outputs renamed to the call's values and every other name
 * prefixed by "<call name>/" (so names stay unique and messages show the path). */
static kn_status inline_call(loader *L, kn_graph *g, const Onnx__NodeProto *np,
                             const Onnx__FunctionProto *fp) {
    kn_ctx *cx = L->cx;
    kn_arena *a = L->root->arena;
    kn_node tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.name = nm(L, np->name);
    tmp.op_type = np->op_type;
    if (L->calls >= MAX_SUBGRAPH_DEPTH)
        return kn_diag(cx, &tmp, KN_ELIMIT,
                       "model-local functions call each other more than %d levels deep",
                       MAX_SUBGRAPH_DEPTH);
    if (np->n_input > fp->n_input || np->n_output > fp->n_output)
        return kn_diag(cx, &tmp, KN_EINVAL,
                       "calls function '%s' with %zu inputs and %zu outputs; it has %zu and %zu",
                       fp->name, np->n_input, np->n_output, fp->n_input, fp->n_output);
    fn_scope f = {.up = L->fn, .fp = fp, .call = np};
    char prefix[600];
    snprintf(prefix, sizeof prefix, "%s/", tmp.name[0] ? tmp.name : fp->name);
    f.prefix = kn_arena_strdup(a, prefix);
    f.actual_in = kn_arena_array(a, fp->n_input + 1, sizeof *f.actual_in);
    f.actual_out = kn_arena_array(a, fp->n_output + 1, sizeof *f.actual_out);
    KN_ASSERT(f.actual_in && f.actual_out);
    for (size_t i = 0; i < fp->n_input; i++)
        f.actual_in[i] = i < np->n_input ? nm(L, np->input[i]) : "";
    /* a formal output is renamed to the caller's value when a body node computes it;
     * otherwise (it is a formal input, or omitted by the caller) it keeps the prefixed
     * name and an Identity below copies it */
    bool *computed = kn_arena_array(a, fp->n_output + 1, sizeof *computed);
    for (size_t j = 0; j < fp->n_output; j++) {
        for (size_t k = 0; k < fp->n_node && !computed[j]; k++)
            for (size_t o = 0; o < fp->node[k]->n_output; o++)
                if (!strcmp(fp->node[k]->output[o], fp->output[j])) computed[j] = true;
        for (size_t i = 0; i < fp->n_input; i++)
            if (!strcmp(fp->input[i], fp->output[j])) computed[j] = false;
        bool used = j < np->n_output && np->output[j][0];
        f.actual_out[j] = used && computed[j] ? nm(L, np->output[j]) : NULL;
    }
    L->fn = &f;
    L->calls++;
    kn_status st = load_nodes(L, g, fp->node, fp->n_node);
    for (size_t j = 0; !st && j < np->n_output; j++) {
        if (!np->output[j][0] || computed[j]) continue;
        const char *src = nm(L, fp->output[j]);
        L->fn = f.up;
        const char *dst = nm(L, np->output[j]);
        L->fn = &f;
        kn_value *in = kn_graph_find_value(g, src);
        if (!in) {
            st = kn_diag(cx, &tmp, KN_EINVAL, "function '%s' never computes its output '%s'",
                         fp->name, fp->output[j]);
            break;
        }
        if (find_local(g, dst)) {
            st = kn_diag(cx, &tmp, KN_EINVAL, "output '%s' is already defined", dst);
            break;
        }
        kn_value *out = kn_graph_add_value(g, dst, NULL);
        kn_node *id = kn_graph_add_node(g, KN_OP_IDENTITY, f.prefix, 1, &in, 1, &out);
        id->opset = g->opset;
    }
    L->calls--;
    L->fn = f.up;
    return st;
}

static kn_status load_node(loader *L, kn_graph *g, const Onnx__NodeProto *np) {
    kn_ctx *cx = L->cx;
    const char *domain = np->domain ? np->domain : "";
    const char *op_type = np->op_type ? np->op_type : "";
    kn_node tmp; /* for messages before the node exists */
    memset(&tmp, 0, sizeof tmp);
    tmp.name = nm(L, np->name);
    tmp.op_type = op_type;
    const Onnx__FunctionProto *fp = find_function(L, domain, op_type);
    if (fp) return inline_call(L, g, np, fp);
    /* ONNX Runtime's quantized contrib operators: rewritten into kiln's by
     * frontend/onnx_contrib.c once the node's values and attributes are read */
    const kn_contrib_op *contrib = NULL;
    int opset = node_opset(L, g, domain);
    if (!strcmp(domain, KN_MS_DOMAIN)) {
        if (!model_imports(L, domain))
            return kn_diag(cx, &tmp, KN_EINVAL, "the model imports no opset for domain '%s'",
                           domain);
        contrib = kn_contrib_find(op_type);
        char names[512];
        if (!contrib)
            return kn_diag(cx, &tmp, KN_EUNSUPPORTED,
                           "operator '%s' (domain '%s') is not supported; kiln imports only %s "
                           "from that domain",
                           op_type, domain, kn_contrib_names(names, sizeof names));
        opset = 1;
    }
    if (!opset) {
        if (!domain_known(domain))
            return kn_diag(cx, &tmp, KN_EUNSUPPORTED, "domain '%s' is not supported", domain);
        return kn_diag(cx, &tmp, KN_EINVAL, "the model imports no opset for domain '%s'", domain);
    }
    kn_op op = contrib ? KN_OP_COUNT : kn_op_lookup(domain, op_type);
    if (!contrib && (op == KN_OP_COUNT || !kn_op_desc(op)->infer))
        return kn_diag(cx, &tmp, KN_EUNSUPPORTED, "operator '%s'%s%s%s is not supported", op_type,
                       domain[0] ? " (domain '" : "", domain, domain[0] ? "')" : "");
    int min_in = contrib ? contrib->min_in : kn_op_desc(op)->min_in;
    int max_in = contrib ? contrib->max_in : kn_op_desc(op)->max_in;
    int min_out = contrib ? 1 : kn_op_desc(op)->min_out;
    int max_out = contrib ? 1 : kn_op_desc(op)->max_out;
    int nin = (int)np->n_input, nout = (int)np->n_output;
    while (nin > 0 && !nm(L, np->input[nin - 1])[0]) nin--; /* trailing omitted inputs */
    if (nin < min_in || nin > max_in)
        return kn_diag(cx, &tmp, KN_EINVAL, "has %d inputs, expected %d to %d", nin, min_in,
                       max_in);
    if (nout < min_out || nout > max_out)
        return kn_diag(cx, &tmp, KN_EINVAL, "has %d outputs, expected %d to %d", nout, min_out,
                       max_out);
    kn_value **in = kn_arena_array(g->arena, (size_t)nin + 1, sizeof *in);
    kn_value **out = kn_arena_array(g->arena, (size_t)nout + 1, sizeof *out);
    for (int i = 0; i < nin; i++) {
        const char *name = nm(L, np->input[i]);
        if (!name[0]) continue;
        in[i] = kn_graph_find_value(g, name);
        if (!in[i])
            return kn_diag(cx, &tmp, KN_EINVAL,
                           "input '%s' is never defined (no initializer, graph input or node "
                           "output has that name)",
                           name);
    }
    for (int i = 0; i < nout; i++) {
        const char *name = nm(L, np->output[i]);
        if (!name[0]) continue;
        if (find_local(g, name))
            return kn_diag(cx, &tmp, KN_EINVAL, "output '%s' is already defined", name);
        out[i] = kn_graph_add_value(g, name, NULL);
    }
    kn_node *n = contrib ? kn_contrib_node(g, tmp.name, op_type, nin, in, nout, out)
                         : kn_graph_add_node(g, op, tmp.name, nin, in, nout, out);
    n->op_type = kn_arena_strdup(g->arena, op_type);
    n->opset = opset;
    if (np->n_attribute > MAX_NODE_ATTRS)
        return kn_diag(cx, n, KN_ELIMIT, "has %zu attributes, more than %d", np->n_attribute,
                       MAX_NODE_ATTRS);
    n->attrs = kn_arena_array(g->arena, np->n_attribute + 1, sizeof *n->attrs);
    L->depth++; /* this node's subgraphs are one level deeper */
    for (size_t i = 0; i < np->n_attribute; i++) {
        for (size_t j = 0; j < i; j++)
            if (np->attribute[j]->name && np->attribute[i]->name &&
                !strcmp(np->attribute[j]->name, np->attribute[i]->name)) {
                L->depth--;
                return kn_diag(cx, n, KN_EINVAL, "attribute '%s' appears twice",
                               np->attribute[i]->name);
            }
        if (load_attr(L, n, np->attribute[i], &n->attrs[n->nattr])) {
            L->depth--;
            return cx->status;
        }
        if (n->attrs[n->nattr].name) n->nattr++; /* else a function attribute not given */
    }
    L->depth--;
    return contrib ? kn_contrib_expand(cx, g, n) : KN_OK;
}

/* ---- node order ----
 * ONNX requires nodes in topological order, but exporters that append nodes (edge
 * Casts added after the fact) break it, and ONNX Runtime sorts such graphs. So does
 * the loader: a stable topological sort (Kahn's algorithm, the smallest file position
 * first, so an ordered graph keeps its order) over the values each node reads,
 * including those its subgraphs read from this scope. A real cycle is refused with
 * its path. */

/* Open-addressing map from value name to the position of the node producing it. */
typedef struct name_map {
    size_t cap; /* a power of two */
    const char **key;
    size_t *val;
} name_map;

static size_t name_hash(const char *s) {
    size_t h = 1469598103934665603u;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211u;
    return h;
}

static void map_put(name_map *m, const char *k, size_t v) {
    size_t i = name_hash(k) & (m->cap - 1);
    while (m->key[i] && strcmp(m->key[i], k)) i = (i + 1) & (m->cap - 1);
    if (!m->key[i]) m->key[i] = k, m->val[i] = v;
}

static bool map_get(const name_map *m, const char *k, size_t *v) {
    size_t i = name_hash(k) & (m->cap - 1);
    for (; m->key[i]; i = (i + 1) & (m->cap - 1))
        if (!strcmp(m->key[i], k)) {
            *v = m->val[i];
            return true;
        }
    return false;
}

/* Growable list of node positions (edges of the dependency graph). */
typedef struct idx_list {
    size_t n, cap;
    size_t *v;
} idx_list;

static void idx_push(idx_list *l, size_t x) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 4;
        l->v = realloc(l->v, l->cap * sizeof *l->v);
        KN_ASSERT(l->v);
    }
    l->v[l->n++] = x;
}

/* Adds to deps the producers (in m) of the names graph gp's nodes read, recursively
 * through nested subgraphs: the values a node's subgraph takes from this scope. */
static void subgraph_reads(loader *L, const Onnx__GraphProto *gp, const name_map *m, idx_list *deps,
                           int depth) {
    if (depth > MAX_SUBGRAPH_DEPTH) return; /* refused later by load_attr */
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *np = gp->node[i];
        size_t p;
        for (size_t k = 0; k < np->n_input; k++)
            if (map_get(m, nm(L, np->input[k]), &p)) idx_push(deps, p);
        for (size_t k = 0; k < np->n_attribute; k++) {
            const Onnx__AttributeProto *ap = np->attribute[k];
            if (ap->g) subgraph_reads(L, ap->g, m, deps, depth + 1);
            for (size_t j = 0; j < ap->n_graphs; j++)
                subgraph_reads(L, ap->graphs[j], m, deps, depth + 1);
        }
    }
}

/* Binary min-heap of node positions. */
static void heap_push(size_t *h, size_t *n, size_t x) {
    size_t i = (*n)++;
    for (; i && h[(i - 1) / 2] > x; i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
    h[i] = x;
}

static size_t heap_pop(size_t *h, size_t *n) {
    size_t top = h[0], x = h[--*n], i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1] < h[c]) c++;
        if (h[c] >= x) break;
        h[i] = h[c];
        i = c;
    }
    if (*n) h[i] = x;
    return top;
}

static const char *node_label(loader *L, const Onnx__NodeProto *np, char *buf, size_t cap) {
    const char *name = nm(L, np->name);
    snprintf(buf, cap, "node '%s' (%s)", name[0] ? name : "<unnamed>",
             np->op_type ? np->op_type : "");
    return buf;
}

/* Reports a cycle among the nodes left unsorted (left[i]): walks from one of them to
 * a producer it waits for until a node repeats, and prints that loop. */
static kn_status report_cycle(loader *L, Onnx__NodeProto *const *nodes, size_t count,
                              const bool *left, idx_list *deps) {
    size_t *seen = calloc(count, sizeof *seen), *path = malloc(count * sizeof *path);
    KN_ASSERT(seen && path);
    size_t at = 0, len = 0;
    while (!left[at]) at++;
    while (!seen[at]) { /* every unsorted node waits for another unsorted node */
        seen[at] = ++len;
        path[len - 1] = at;
        size_t next = at;
        for (size_t k = 0; k < deps[at].n; k++)
            if (left[deps[at].v[k]]) {
                next = deps[at].v[k];
                break;
            }
        at = next;
    }
    char msg[900], lab[300];
    KN_ASSERT(len > 0 && seen[at] > 0);
    size_t start = seen[at] - 1;
    /* path[i] waits for path[i + 1] and path[len - 1] for path[start]: in data order
     * the loop is path[start] -> path[len - 1] -> ... -> path[start] */
    size_t pos =
        (size_t)snprintf(msg, sizeof msg, "%s", node_label(L, nodes[path[start]], lab, sizeof lab));
    for (size_t i = len; i-- > start && pos < sizeof msg;)
        pos += (size_t)snprintf(msg + pos, sizeof msg - pos, " -> %s",
                                node_label(L, nodes[path[i]], lab, sizeof lab));
    free(seen);
    free(path);
    return kn_diag(L->cx, NULL, KN_EINVAL, "the graph has a cycle: %s", msg);
}

/* Loads nodes[0..count) into g in a topological order. */
static kn_status load_nodes(loader *L, kn_graph *g, Onnx__NodeProto *const *nodes, size_t count) {
    if (!count) return KN_OK;
    name_map m = {.cap = 16};
    size_t nouts = 0;
    for (size_t i = 0; i < count; i++) nouts += nodes[i]->n_output;
    while (m.cap < 2 * nouts + 2) m.cap *= 2;
    m.key = calloc(m.cap, sizeof *m.key);
    m.val = calloc(m.cap, sizeof *m.val);
    idx_list *deps = calloc(count, sizeof *deps);   /* producers node i waits for */
    idx_list *users = calloc(count, sizeof *users); /* nodes waiting for node i */
    size_t *indeg = calloc(count, sizeof *indeg), *heap = malloc(count * sizeof *heap), nh = 0;
    bool *left = malloc(count * sizeof *left);
    KN_ASSERT(m.key && m.val && deps && users && indeg && heap && left);
    for (size_t i = 0; i < count; i++)
        for (size_t k = 0; k < nodes[i]->n_output; k++) {
            const char *o = nm(L, nodes[i]->output[k]);
            if (o[0]) map_put(&m, o, i);
        }
    for (size_t i = 0; i < count; i++) {
        const Onnx__NodeProto *np = nodes[i];
        size_t p;
        for (size_t k = 0; k < np->n_input; k++)
            if (map_get(&m, nm(L, np->input[k]), &p)) idx_push(&deps[i], p);
        for (size_t k = 0; k < np->n_attribute; k++) {
            const Onnx__AttributeProto *ap = np->attribute[k];
            if (ap->g) subgraph_reads(L, ap->g, &m, &deps[i], 1);
            for (size_t j = 0; j < ap->n_graphs; j++)
                subgraph_reads(L, ap->graphs[j], &m, &deps[i], 1);
        }
        for (size_t k = 0; k < deps[i].n; k++) {
            indeg[i]++;
            idx_push(&users[deps[i].v[k]], i);
        }
        left[i] = true;
    }
    for (size_t i = 0; i < count; i++)
        if (!indeg[i]) heap_push(heap, &nh, i);
    kn_status st = KN_OK;
    size_t done = 0, expect = 0;
    while (nh && !st) {
        size_t i = heap_pop(heap, &nh);
        if (i != expect) L->reordered = true;
        expect = i + 1;
        left[i] = false;
        done++;
        st = load_node(L, g, nodes[i]);
        for (size_t k = 0; k < users[i].n; k++)
            if (!--indeg[users[i].v[k]]) heap_push(heap, &nh, users[i].v[k]);
    }
    if (!st && done < count) st = report_cycle(L, nodes, count, left, deps);
    for (size_t i = 0; i < count; i++) free(deps[i].v), free(users[i].v);
    free(deps), free(users), free(indeg), free(heap), free(left), free(m.key), free(m.val);
    return st;
}

/* Refuses value `name` (an initializer or graph input, what) of an ONNX data type kiln
 * has no dtype for (float8, int4, complex), naming the first node of gp that reads it. */
static kn_status refuse_type(loader *L, const Onnx__GraphProto *gp, const char *what,
                             const char *name, int type) {
    for (size_t i = 0; i < gp->n_node; i++)
        for (size_t k = 0; k < gp->node[i]->n_input; k++)
            if (!strcmp(gp->node[i]->input[k], name))
                return kn_diag(L->cx, NULL, KN_EUNSUPPORTED,
                               "node '%s' (%s): input %zu is %s '%s' of data type %s (%d): %s",
                               gp->node[i]->name ? gp->node[i]->name : "",
                               gp->node[i]->op_type ? gp->node[i]->op_type : "", k, what, name,
                               kn_onnx_type_name(type), type, KN_UNSUPPORTED_TYPES);
    return kn_diag(L->cx, NULL, KN_EUNSUPPORTED, "%s '%s' has data type %s (%d): %s", what, name,
                   kn_onnx_type_name(type), type, KN_UNSUPPORTED_TYPES);
}

/* The ONNX data type of a ValueInfoProto's tensor type, else 0. */
static int vi_elem_type(const Onnx__ValueInfoProto *vi) {
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return 0;
    return tp->tensor_type->has_elem_type ? tp->tensor_type->elem_type : 0;
}

static kn_status load_graph(loader *L, const Onnx__GraphProto *gp, kn_graph *g) {
    kn_ctx *cx = L->cx;
    kn_arena *a = g->arena;
    if (gp->name && !g->name[0]) g->name = kn_arena_strdup(a, gp->name);
    for (size_t i = 0; i < gp->n_initializer + gp->n_sparse_initializer; i++) {
        bool sparse = i >= gp->n_initializer;
        const Onnx__SparseTensorProto *sp =
            sparse ? gp->sparse_initializer[i - gp->n_initializer] : NULL;
        const Onnx__TensorProto *tp = sparse ? sp->values : gp->initializer[i];
        if (!tp || !tp->name || !tp->name[0])
            return kn_diag(cx, NULL, KN_EINVAL, "initializer %zu has no name", i);
        const char *name = nm(L, tp->name);
        if (find_local(g, name))
            return kn_diag(cx, NULL, KN_EINVAL, "initializer '%s' is defined twice", name);
        kn_tensor *t;
        if (tp->has_data_type && !kn_dtype_valid(tp->data_type) && kn_onnx_type_name(tp->data_type))
            return refuse_type(L, gp, "initializer", name, tp->data_type);
        L->adopt = !sparse;
        kn_status st = sparse ? densify(L, NULL, a, sp, &t) : decode_tensor(L, NULL, a, tp, &t);
        L->adopt = false;
        if (st) return cx->status;
        if (!sparse) release_data(L, gp->initializer[i]);
        kn_value *v = kn_graph_add_value(g, name, &t->type);
        v->constant = t;
    }
    g->inputs = kn_arena_array(a, gp->n_input + 1, sizeof *g->inputs);
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        if (!vi->name || !vi->name[0])
            return kn_diag(cx, NULL, KN_EINVAL, "graph input %zu has no name", i);
        const char *name = nm(L, vi->name);
        kn_value *v = find_local(g, name);
        if (v && v->constant) continue; /* initializer with a default: a constant */
        if (v) return kn_diag(cx, NULL, KN_EINVAL, "graph input '%s' is declared twice", name);
        char what[300];
        snprintf(what, sizeof what, "graph input '%s'", name);
        kn_type t;
        int et = vi_elem_type(vi);
        if (et && !kn_dtype_valid(et) && kn_onnx_type_name(et))
            return refuse_type(L, gp, "graph input", name, et);
        if (convert_type(L, NULL, what, vi->type, &t)) return cx->status;
        v = kn_graph_add_value(g, name, &t);
        v->flags |= KN_VALUE_INPUT;
        g->inputs[g->nin++] = v;
    }
    if (load_nodes(L, g, gp->node, gp->n_node)) return cx->status;
    if (!g->parent) { /* declared types of computed values: checked by shape inference */
        g->hints = kn_arena_array(a, gp->n_value_info + gp->n_output + 1, sizeof *g->hints);
        for (size_t i = 0; i < gp->n_value_info; i++) {
            const Onnx__ValueInfoProto *vi = gp->value_info[i];
            kn_value *v = vi->name ? find_local(g, vi->name) : NULL;
            kn_type t;
            char what[300];
            snprintf(what, sizeof what, "value_info '%s'", vi->name ? vi->name : "");
            if (!v || !v->producer || convert_type(L, NULL, what, vi->type, &t)) {
                kn_ctx_clear(cx); /* a value_info that names nothing or is unreadable */
                continue;
            }
            g->hints[g->nhints++] = (kn_type_hint){v, t};
        }
    }
    g->outputs = kn_arena_array(a, gp->n_output + 1, sizeof *g->outputs);
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        const char *name = nm(L, vi->name ? vi->name : "");
        kn_value *v = kn_graph_find_value(g, name);
        if (!v) return kn_diag(cx, NULL, KN_EINVAL, "graph output '%s' is never computed", name);
        if (v->producer) { /* the declared type is a hint until shape inference runs */
            char what[300];
            snprintf(what, sizeof what, "graph output '%s'", name);
            if (convert_type(L, NULL, what, vi->type, &v->type)) return cx->status;
            if (!g->parent) g->hints[g->nhints++] = (kn_type_hint){v, v->type};
        }
        v->flags |= KN_VALUE_OUTPUT;
        g->outputs[g->nout++] = v;
    }
    return KN_OK;
}

/* Marks in used[] (by value id) every value a node of g or of its subgraphs reads. */
static void mark_used(const kn_graph *g, bool *used) {
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        for (int k = 0; k < n->nin; k++)
            if (n->in[k]) used[n->in[k]->id] = true;
        for (int k = 0; k < n->nattr; k++) {
            if (n->attrs[k].kind == KN_ATTR_GRAPH) mark_used(n->attrs[k].g, used);
            for (int j = 0; n->attrs[k].kind == KN_ATTR_GRAPHS && j < n->attrs[k].n; j++)
                mark_used(n->attrs[k].graphs[j], used);
        }
    }
    for (int j = 0; j < g->nout; j++) used[g->outputs[j]->id] = true;
}

/* Warns about initializers of the main graph that nothing reads (ONNX Runtime
 * ignores them too); the code generators leave them out. */
static void warn_unused(kn_ctx *cx, const kn_graph *g) {
    bool *used = calloc((size_t)kn_graph_value_count(g) + 1, sizeof *used);
    KN_ASSERT(used);
    mark_used(g, used);
    int n = 0;
    const char *first = NULL;
    for (int i = 0; i < g->nvalues; i++) {
        const kn_value *v = g->values[i];
        if (!v->constant || v->producer || used[v->id]) continue;
        if (!n++) first = v->name;
    }
    free(used);
    if (n == 1) kn_warn(cx, NULL, "initializer '%s' is never used; ignored", first);
    if (n > 1)
        kn_warn(cx, NULL, "%d initializers are never used (the first: '%s'); ignored", n, first);
}

/* protobuf-c unpacks nested messages recursively, so a file nesting thousands of
 * subgraphs (or types) would overflow the stack before kiln's own checks run. This
 * measures the nesting first, without recursion into protobuf-c: each length-delimited
 * field that parses as a message counts one level (a string that happens to parse as
 * a message only overestimates). Returns the depth, or cap + 1 once past cap; -1 if
 * [p, p + n) is not a well-formed message. With cap -1 it only checks the form.
 * Recursion depth is bounded by cap. */
#define MAX_WIRE_DEPTH 1000

static int wire_depth(const uint8_t *p, size_t n, int cap) {
    int deepest = 0;
    size_t i = 0;
    while (i < n) {
        uint64_t key = 0, len = 0;
        int shift = 0;
        do { /* varint key */
            if (i >= n || shift > 63) return -1;
            key |= (uint64_t)(p[i] & 0x7f) << shift;
            shift += 7;
        } while (p[i++] & 0x80);
        if (key >> 3 == 0) return -1;
        switch (key & 7) {
        case 0:
            do {
                if (i >= n) return -1;
            } while (p[i++] & 0x80);
            break;
        case 1:
            if (n - i < 8) return -1;
            i += 8;
            break;
        case 5:
            if (n - i < 4) return -1;
            i += 4;
            break;
        case 2:
            shift = 0;
            do {
                if (i >= n || shift > 63) return -1;
                len |= (uint64_t)(p[i] & 0x7f) << shift;
                shift += 7;
            } while (p[i++] & 0x80);
            if (len > n - i) return -1;
            if (len && cap >= 0) { /* at cap 0 a sub-message only needs to parse */
                int d = wire_depth(p + i, (size_t)len, cap - 1);
                if (d >= 0 && d + 1 > deepest) deepest = d + 1;
                if (deepest > cap) return cap + 1;
            }
            i += (size_t)len;
            break;
        default: return -1; /* groups are not used by ONNX */
        }
    }
    return deepest;
}

static Onnx__ModelProto *unpack_model_with(kn_ctx *cx, const void *buf, size_t len,
                                           ProtobufCAllocator *alloc);

static Onnx__ModelProto *unpack_model(kn_ctx *cx, const void *buf, size_t len) {
    return unpack_model_with(cx, buf, len, NULL);
}

/* A model file mapped read-only, unpacked by protobuf-c with an allocator that gives
 * back the file's pages already consumed: protobuf-c copies each bytes field (raw_data)
 * out of the file in file order, so when it asks for a big block, the previous big
 * block has been copied and the file up to that block's source is done with. Its source
 * is found by searching its first bytes from where the last one was found: the first
 * match is at or before the true place, so at worst fewer pages are dropped. Dropping a
 * page of a private read-only file mapping (MADV_DONTNEED) only takes it out of the
 * process's resident set; read again, it comes back from the file, so a wrong guess
 * costs time, never correctness. Loading then holds about one copy of the weights (the
 * file's or the unpacked one), not both (#11, compile memory). */
typedef struct drop_alloc {
    kn_arena *big; /* the big blocks: chunks of their own, which the graph may adopt */
    const unsigned char *map;
    size_t len, pos, dropped;  /* search from pos; pages below dropped are given back */
    const unsigned char *prev; /* the previous big block, and its size */
    size_t prev_len;
    size_t page;
} drop_alloc;

enum { DROP_BIG = 1 << 20, DROP_KEY = 64 };

static void drop_consumed(drop_alloc *D) {
    if (!D->prev || D->prev_len < DROP_KEY) return;
    const unsigned char *hit = memmem(D->map + D->pos, D->len - D->pos, D->prev, DROP_KEY);
    if (!hit) return;
    size_t end = (size_t)(hit - D->map) + D->prev_len;
    if (end > D->len) return;
    D->pos = end;
    size_t to = end / D->page * D->page;
    if (to > D->dropped) {
        madvise((void *)(D->map + D->dropped), to - D->dropped, MADV_DONTNEED);
        D->dropped = to;
    }
}

static void *drop_alloc_fn(void *data, size_t size) {
    drop_alloc *D = data;
    if (size < DROP_BIG) return malloc(size ? size : 1);
    void *p = kn_arena_alloc(D->big, size); /* 64-byte aligned, on huge pages */
    if (p) {
        drop_consumed(D);
        D->prev = p;
        D->prev_len = size;
    }
    return p;
}

static void drop_free_fn(void *data, void *p) {
    drop_alloc *D = data;
    if (p && p == D->prev) D->prev = NULL;
    if (!kn_arena_release(D->big, p)) free(p);
}

static Onnx__ModelProto *unpack_model_with(kn_ctx *cx, const void *buf, size_t len,
                                           ProtobufCAllocator *alloc) {
    if (!len) {
        kn_diag(cx, NULL, KN_EINVAL, "the file is empty, not an ONNX model");
        return NULL;
    }
    if (wire_depth(buf, len, MAX_WIRE_DEPTH) > MAX_WIRE_DEPTH) {
        kn_diag(cx, NULL, KN_ELIMIT, "messages are nested more than %d levels deep",
                MAX_WIRE_DEPTH);
        return NULL;
    }
    Onnx__ModelProto *mp = onnx__model_proto__unpack(alloc, len, buf);
    if (!mp) kn_diag(cx, NULL, KN_EINVAL, "not an ONNX model (protobuf parsing failed)");
    return mp;
}

/* Builds the graph from mp and frees mp, which the loader consumes as it goes: each
 * initializer's data is freed once copied into the graph's arena, so loading needs
 * about one model's size beside the graph, not two. */
static kn_status load_model(kn_ctx *cx, Onnx__ModelProto *mp, ProtobufCAllocator *alloc,
                            kn_arena *big, const char *base_dir, const char *display_name,
                            kn_graph **out) {
    kn_graph *g = kn_graph_create(display_name);
    loader L = {.cx = cx, .root = g, .base_dir = base_dir, .mp = mp, .alloc = alloc, .big = big};
    g->ir_version = mp->has_ir_version ? (int)mp->ir_version : 0;
    if (mp->has_ir_version && mp->ir_version > KN_ONNX_MAX_IR_VERSION) {
        kn_diag(cx, NULL, KN_EUNSUPPORTED,
                "IR version %lld is newer than the newest supported (%d)",
                (long long)mp->ir_version, KN_ONNX_MAX_IR_VERSION);
        goto fail;
    }
    for (size_t i = 0; i < mp->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
        const char *d = o->domain ? o->domain : "";
        long long v = o->has_version ? (long long)o->version : 0;
        if (v < 1) {
            kn_diag(cx, NULL, KN_EINVAL, "opset import for domain '%s' has invalid version %lld", d,
                    v);
            goto fail;
        }
        /* the newest opset of each domain whose semantics kiln implements; other
         * domains are refused by the nodes that use them */
        int *slot = NULL, max = 0;
        if (!d[0] || !strcmp(d, "ai.onnx"))
            slot = &g->opset, max = KN_ONNX_MAX_OPSET;
        else if (!strcmp(d, "ai.onnx.ml"))
            slot = &g->opset_ml, max = KN_ONNX_MAX_OPSET_ML;
        else if (!strcmp(d, "ai.onnx.preview.training"))
            slot = &g->opset_training, max = KN_ONNX_MAX_OPSET_TRAINING;
        if (slot && v > max) {
            if (!d[0])
                kn_diag(cx, NULL, KN_EUNSUPPORTED,
                        "opset %lld is newer than the newest supported (%d)", v, max);
            else
                kn_diag(cx, NULL, KN_EUNSUPPORTED,
                        "domain '%s' opset %lld is newer than the newest supported (%d)", d, v,
                        max);
            goto fail;
        }
        if (slot) *slot = (int)v;
    }
    if (!mp->n_opset_import) g->opset = 1; /* IR version 1 models predate opset imports */
    if (!mp->graph) {
        kn_diag(cx, NULL, KN_EINVAL, "the model has no graph");
        goto fail;
    }
    if (load_graph(&L, mp->graph, g) || kn_graph_verify(cx, g)) goto fail;
    if (L.reordered)
        kn_warn(cx, NULL,
                "the nodes are not in topological order (as ONNX requires); kiln sorted them");
    warn_unused(cx, g);
    kn_weights_detect(g); /* half weights Cast to float: stored half (passes/lowp.c) */
    onnx__model_proto__free_unpacked(mp, alloc);
    *out = g;
    return KN_OK;
fail:
    onnx__model_proto__free_unpacked(mp, alloc);
    kn_graph_destroy(g);
    return cx->status;
}

kn_status kn_onnx_load_memory(kn_ctx *cx, const void *buf, size_t len, const char *base_dir,
                              const char *display_name, kn_graph **out) {
    *out = NULL;
    Onnx__ModelProto *mp = unpack_model(cx, buf, len);
    return mp ? load_model(cx, mp, NULL, NULL, base_dir, display_name, out) : cx->status;
}

kn_status kn_onnx_load_file(kn_ctx *cx, const char *path, kn_graph **out) {
    void *buf;
    size_t len;
    *out = NULL;
    void *map = NULL;
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (unsigned long long)st.st_size < SIZE_MAX / 2) {
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (map == MAP_FAILED) map = NULL;
    }
    if (fd >= 0) close(fd);
    if (map) {
        buf = map;
        len = (size_t)st.st_size;
    } else if (kn_read_file(cx, path, &buf, &len)) {
        return cx->status;
    }
    char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else
        snprintf(dir, sizeof dir, ".");
    if (!dir[0]) snprintf(dir, sizeof dir, "/");
    Onnx__ModelProto *mp;
    long page = sysconf(_SC_PAGESIZE);
    drop_alloc D = {.map = map, .len = len, .page = page > 0 ? (size_t)page : 4096};
    ProtobufCAllocator a = {drop_alloc_fn, drop_free_fn, &D};
    if (map) {
        D.big = kn_arena_create();
        mp = unpack_model_with(cx, buf, len, &a);
        munmap(map, len);
    } else {
        mp = unpack_model(cx, buf, len);
        free(buf);
    }
    /* before the graph is built: the file, its unpacked copy and the graph's copy of
     * the weights are never all alive at once; the graph adopts the unpacked raw data
     * of its initializers (decode_tensor), so most weights are copied once, not twice */
    kn_status rc = mp ? load_model(cx, mp, map ? &a : NULL, D.big, dir, path, out) : cx->status;
    kn_arena_destroy(D.big); /* what the graph did not adopt was freed with mp */
    return rc;
}

/* ---- values in test data files ---- */

static kn_status decode_sequence(loader *L, kn_arena *a, const Onnx__SequenceProto *sp,
                                 kn_tensor **out) {
    kn_ctx *cx = L->cx;
    if (sp->n_sequence_values || sp->n_map_values || sp->n_optional_values ||
        sp->n_sparse_tensor_values)
        return kn_diag(cx, NULL, KN_EUNSUPPORTED, "only sequences of tensors are supported");
    kn_type ty = kn_type_unknown(KN_UNDEF);
    ty.kind = KN_KIND_SEQUENCE;
    kn_tensor *s = kn_tensor_typed(a, &ty);
    s->nitems = (int)sp->n_tensor_values;
    s->items = kn_arena_array(a, sp->n_tensor_values + 1, sizeof *s->items);
    for (size_t i = 0; i < sp->n_tensor_values; i++)
        if (decode_tensor(L, NULL, a, sp->tensor_values[i], &s->items[i])) return cx->status;
    if (s->nitems) s->type.dtype = s->items[0]->type.dtype;
    *out = s;
    return KN_OK;
}

kn_status kn_onnx_decode_value(kn_ctx *cx, kn_arena *a, const void *buf, size_t len, kn_kind kind,
                               kn_tensor **out) {
    loader L = {.cx = cx};
    kn_status st = KN_OK;
    if (kind == KN_KIND_TENSOR) {
        Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, len, buf);
        if (!tp) return kn_diag(cx, NULL, KN_EINVAL, "not a TensorProto (protobuf parsing failed)");
        st = decode_tensor(&L, NULL, a, tp, out);
        onnx__tensor_proto__free_unpacked(tp, NULL);
    } else if (kind == KN_KIND_SEQUENCE) {
        Onnx__SequenceProto *sp = onnx__sequence_proto__unpack(NULL, len, buf);
        if (!sp)
            return kn_diag(cx, NULL, KN_EINVAL, "not a SequenceProto (protobuf parsing failed)");
        st = decode_sequence(&L, a, sp, out);
        onnx__sequence_proto__free_unpacked(sp, NULL);
    } else {
        Onnx__OptionalProto *op = onnx__optional_proto__unpack(NULL, len, buf);
        if (!op)
            return kn_diag(cx, NULL, KN_EINVAL, "not an OptionalProto (protobuf parsing failed)");
        kn_tensor *item = NULL;
        if (op->tensor_value)
            st = decode_tensor(&L, NULL, a, op->tensor_value, &item);
        else if (op->sequence_value)
            st = decode_sequence(&L, a, op->sequence_value, &item);
        if (!st) {
            kn_type ty = item ? item->type : kn_type_unknown(KN_UNDEF);
            if (item) ty.elem_kind = item->type.kind;
            ty.kind = KN_KIND_OPTIONAL;
            kn_tensor *o = kn_tensor_typed(a, &ty);
            o->nitems = item ? 1 : 0;
            o->items = kn_arena_alloc(a, sizeof *o->items);
            o->items[0] = item;
            *out = o;
        }
        onnx__optional_proto__free_unpacked(op, NULL);
    }
    return st;
}

kn_status kn_onnx_encode_tensor(kn_ctx *cx, const kn_tensor *t, const char *name, void **buf,
                                size_t *len) {
    if (t->type.kind != KN_KIND_TENSOR || !t->data)
        return kn_diag(cx, NULL, KN_EUNSUPPORTED, "only tensors can be written as .pb");
    Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
    tp.name = (char *)name;
    tp.has_data_type = 1;
    tp.data_type = t->type.dtype;
    tp.n_dims = (size_t)t->type.rank;
    tp.dims = (int64_t *)t->type.dims;
    size_t numel = (size_t)kn_tensor_numel(t);
    ProtobufCBinaryData *strs = NULL;
    uint8_t *packed = NULL;
    if (t->type.dtype == KN_STRING) {
        strs = calloc(numel + 1, sizeof *strs);
        KN_ASSERT(strs);
        for (size_t i = 0; i < numel; i++) {
            char *s = ((char **)t->data)[i];
            strs[i].data = (uint8_t *)s;
            strs[i].len = strlen(s);
        }
        tp.n_string_data = numel;
        tp.string_data = strs;
    } else if (kn_dtype_is_4bit(t->type.dtype)) { /* ONNX packs them two to a byte */
        tp.has_raw_data = 1;
        tp.raw_data.len = (numel + 1) / 2;
        packed = calloc(tp.raw_data.len + 1, 1);
        KN_ASSERT(packed);
        for (size_t i = 0; i < numel; i++)
            kn_i4_set(packed, i, (int)kn_load_i64(t->data, t->type.dtype, i));
        tp.raw_data.data = packed;
    } else {
        tp.has_raw_data = 1;
        tp.raw_data.data = t->data;
        tp.raw_data.len = kn_tensor_nbytes(t);
    }
    *len = onnx__tensor_proto__get_packed_size(&tp);
    *buf = malloc(*len + 1);
    KN_ASSERT(*buf);
    onnx__tensor_proto__pack(&tp, *buf);
    free(strs);
    free(packed);
    return KN_OK;
}
