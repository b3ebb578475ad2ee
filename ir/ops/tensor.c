/* Operators of group 'tensor': constants, shape queries and shape-driven data
 * movement (Constant*, Identity, Dropout, Shape, Size, Reshape, Flatten, Squeeze,
 * Unsqueeze, Expand, Transpose, Concat, Split, Slice, Pad, Range, Tile,
 * DepthToSpace, SpaceToDepth, EyeLike, Trilu). Ops that select or place elements
 * by index (Gather*, Scatter*, Compress, NonZero, OneHot, ...) live in index.c.
 * See ir/ops.h for the infer/eval contract.
 *
 * Data movement is written once for every dtype: elements are copied as opaque
 * blocks of the dtype's size (string tensors copy their `char *`, which stay valid
 * because they live in the run's or the graph's arena). Only ops that compute
 * values (Dropout, Range, EyeLike, Pad's opset < 11 fill value) look at the dtype.
 *
 * Many output shapes depend on input values (Reshape's shape, Slice's starts). infer
 * reads those values when the input has data and otherwise produces an unknown
 * type; at run time every input has data, so infer yields the exact type and eval
 * finds its outputs allocated. Eval still allocates an output it is handed as NULL,
 * from the types infer computes on the actual inputs (kn_alloc_outputs). */
#include "ir/ops.h"

#include <math.h>
#include <string.h>

/* ---- helpers ---- */

/* Reads the integer values of known 1-D (or scalar) tensor t, input number i, into
 * v[0..cap); sets *cnt. */
static kn_status read_ints(kn_ctx *cx, const kn_node *n, const kn_tensor *t, int i, int64_t *v,
                           int cap, int *cnt) {
    if (!kn_dtype_get(t->type.dtype)->is_int)
        return kn_diag(cx, n, KN_EINVAL, "input %d must be an integer tensor, not %s", i,
                       kn_dtype_name(t->type.dtype));
    if (t->type.rank > 1)
        return kn_diag(cx, n, KN_EINVAL, "input %d must be 1-D, has rank %d", i, t->type.rank);
    int64_t k = kn_tensor_numel(t);
    if (k > cap)
        return kn_diag(cx, n, KN_EINVAL, "input %d has %lld values, at most %d allowed", i,
                       (long long)k, cap);
    for (int64_t j = 0; j < k; j++) v[j] = kn_load_i64(t->data, t->type.dtype, (size_t)j);
    *cnt = (int)k;
    return KN_OK;
}

/* Integer list given either as attribute `attr` (opset < input_opset) or as input
 * number `idx`. *cnt = -1 when absent, -2 when present but not known statically. */
static kn_status ints_from(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, const char *attr,
                           int idx, int input_opset, int64_t *v, int cap, int *cnt) {
    *cnt = -1;
    if (n->opset < input_opset) {
        const int64_t *a;
        int k = kn_attr_ints(cx, n, attr, &a);
        if (kn_failed(cx)) return cx->status;
        if (k > cap)
            return kn_diag(cx, n, KN_EINVAL, "attribute %s has %d values, at most %d allowed", attr,
                           k, cap);
        for (int j = 0; j < k; j++) v[j] = a[j];
        *cnt = k;
        return KN_OK;
    }
    const kn_tensor *t = kn_opt_in(n, in, idx);
    if (!t) return KN_OK;
    if (t->type.kind != KN_KIND_TENSOR)
        return kn_diag(cx, n, KN_EINVAL, "input %d must be a tensor", idx);
    if (!kn_data_known(t)) {
        *cnt = -2;
        return KN_OK;
    }
    return read_ints(cx, n, t, idx, v, cap, cnt);
}

/* Scalar (or one-element) value of known tensor t as int64 / double. */
static kn_status scalar_i64(kn_ctx *cx, const kn_node *n, const kn_tensor *t, int i, int64_t *v) {
    if (kn_tensor_numel(t) != 1)
        return kn_diag(cx, n, KN_EINVAL, "input %d must hold one value, has %lld", i,
                       (long long)kn_tensor_numel(t));
    *v = kn_load_i64(t->data, t->type.dtype, 0);
    return KN_OK;
}

/* ---- Constant ---- */

static kn_status infer_constant(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    (void)in;
    if (n->nattr != 1)
        return kn_diag(cx, n, KN_EINVAL, "needs exactly one value attribute, has %d", n->nattr);
    const kn_attr *a = &n->attrs[0];
    int64_t len = a->n; /* of the list kinds */
    if (!strcmp(a->name, "value") && a->kind == KN_ATTR_TENSOR)
        out[0] = a->t->type;
    else if (!strcmp(a->name, "sparse_value"))
        return kn_diag(cx, n, KN_EUNSUPPORTED, "sparse_value constants are not supported");
    else if (!strcmp(a->name, "value_float") && a->kind == KN_ATTR_FLOAT)
        out[0] = kn_type_scalar(KN_F32);
    else if (!strcmp(a->name, "value_int") && a->kind == KN_ATTR_INT)
        out[0] = kn_type_scalar(KN_I64);
    else if (!strcmp(a->name, "value_string") && a->kind == KN_ATTR_STRING)
        out[0] = kn_type_scalar(KN_STRING);
    else if (!strcmp(a->name, "value_floats") && a->kind == KN_ATTR_FLOATS)
        out[0] = kn_type_make(KN_F32, 1, &len);
    else if (!strcmp(a->name, "value_ints") && a->kind == KN_ATTR_INTS)
        out[0] = kn_type_make(KN_I64, 1, &len);
    else if (!strcmp(a->name, "value_strings") && a->kind == KN_ATTR_STRINGS)
        out[0] = kn_type_make(KN_STRING, 1, &len);
    else
        return kn_diag(cx, n, KN_EINVAL, "unknown value attribute '%s' or wrong kind", a->name);
    return KN_OK;
}

static kn_status eval_constant(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                               kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_constant);
    if (st) return st;
    const kn_attr *a = &n->attrs[0];
    void *d = out[0]->data;
    switch (a->kind) {
    case KN_ATTR_TENSOR:
        if (!a->t->data) return kn_diag(kn_exec_ctx(ex), n, KN_EINVAL, "value has no data");
        kn_copy_all(out[0], a->t);
        break;
    case KN_ATTR_FLOAT: ((float *)d)[0] = a->f; break;
    case KN_ATTR_INT: ((int64_t *)d)[0] = a->i; break;
    case KN_ATTR_STRING: ((const char **)d)[0] = a->s; break;
    case KN_ATTR_FLOATS:
        for (int i = 0; i < a->n; i++) ((float *)d)[i] = a->floats[i];
        break;
    case KN_ATTR_INTS:
        for (int i = 0; i < a->n; i++) ((int64_t *)d)[i] = a->ints[i];
        break;
    case KN_ATTR_STRINGS:
        for (int i = 0; i < a->n; i++) ((const char **)d)[i] = a->strings[i];
        break;
    default: KN_ASSERT(!"attribute kind checked by infer");
    }
    return KN_OK;
}

/* ---- ConstantOfShape ---- */

static kn_status infer_constantofshape(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                       kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    kn_tensor *v = kn_attr_tensor(cx, n, "value");
    if (kn_failed(cx)) return cx->status;
    if (v && kn_tensor_numel(v) != 1)
        return kn_diag(cx, n, KN_EINVAL, "value must hold one element, has %lld",
                       (long long)kn_tensor_numel(v));
    kn_dtype dt = v ? v->type.dtype : KN_F32;
    const kn_tensor *s = in[0];
    if (s->type.rank != 1 && s->type.rank != -1)
        return kn_diag(cx, n, KN_EINVAL, "shape input must be 1-D, has rank %d", s->type.rank);
    if (!kn_data_known(s)) {
        out[0] = kn_type_unknown(dt);
        if (s->type.rank == 1 && s->type.dims[0] >= 0 && s->type.dims[0] <= KN_MAX_RANK) {
            out[0].rank = (int)s->type.dims[0];
            for (int i = 0; i < out[0].rank; i++) out[0].dims[i] = -1;
        }
        return KN_OK;
    }
    int64_t dims[KN_MAX_RANK];
    int r;
    if ((st = read_ints(cx, n, s, 0, dims, KN_MAX_RANK, &r))) return st;
    for (int i = 0; i < r; i++)
        if (dims[i] < 0)
            return kn_diag(cx, n, KN_EINVAL, "shape[%d] is negative (%lld)", i, (long long)dims[i]);
    out[0] = kn_type_make(dt, r, dims);
    return KN_OK;
}

static kn_status eval_constantofshape(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                      kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_constantofshape);
    if (st) return st;
    kn_tensor *v = kn_attr_tensor(kn_exec_ctx(ex), n, "value");
    int64_t cnt = kn_tensor_numel(out[0]);
    size_t es = kn_elem_size(out[0]->type.dtype);
    for (int64_t i = 0; i < cnt; i++) {
        if (v)
            kn_copy_elem(out[0]->data, i, v->data, 0, es);
        else
            ((float *)out[0]->data)[i] = 0.0f;
    }
    return KN_OK;
}

/* ---- Dropout: inference is the identity; training mode drops at random ---- */

/* Ratio and training flag: opset >= 12 takes them as inputs 1 and 2. When they are
 * not known statically, *training is -1. */
static kn_status dropout_params(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, double *ratio,
                                int *training) {
    *ratio = kn_attr_float(cx, n, "ratio", 0.5f);
    *training = 0;
    if (kn_failed(cx)) return cx->status;
    if (n->opset < 12) return KN_OK;
    const kn_tensor *r = kn_opt_in(n, in, 1), *t = kn_opt_in(n, in, 2);
    if (r) {
        if (!kn_data_known(r))
            *training = -1;
        else
            *ratio = kn_load_f64(r->data, r->type.dtype, 0);
    }
    if (t) {
        if (!kn_data_known(t))
            *training = -1;
        else if (*training == 0)
            *training = kn_load_i64(t->data, t->type.dtype, 0) != 0;
    }
    if (*ratio < 0 || *ratio >= 1)
        return kn_diag(cx, n, KN_EINVAL, "ratio %g is outside [0, 1)", *ratio);
    return KN_OK;
}

static kn_status infer_dropout(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT);
    if (st) return st;
    double ratio;
    int training;
    if ((st = dropout_params(cx, n, in, &ratio, &training))) return st;
    out[0] = in[0]->type;
    if (n->nout > 1) {
        out[1] = in[0]->type;
        /* Dropout-7..9 return the mask in the input's type, later opsets as bool. */
        if (n->opset >= 10) out[1].dtype = KN_BOOL;
    }
    return KN_OK;
}

static kn_status eval_dropout(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_dropout);
    if (st) return st;
    double ratio;
    int training;
    if ((st = dropout_params(kn_exec_ctx(ex), n, in, &ratio, &training))) return st;
    kn_tensor *x = in[0], *mask = n->nout > 1 ? out[1] : NULL;
    int64_t cnt = kn_tensor_numel(x);
    kn_dtype dt = x->type.dtype;
    if (!training || ratio == 0) {
        kn_copy_all(out[0], x);
        if (mask)
            for (int64_t i = 0; i < cnt; i++) kn_store_f64(mask->data, mask->type.dtype, i, 1);
        return KN_OK;
    }
    double scale = 1.0 / (1.0 - ratio);
    for (int64_t i = 0; i < cnt; i++) {
        int keep = kn_exec_random(ex) >= ratio;
        kn_store_f64(out[0]->data, dt, i, keep ? kn_load_f64(x->data, dt, i) * scale : 0.0);
        if (mask) kn_store_f64(mask->data, mask->type.dtype, i, keep);
    }
    return KN_OK;
}

/* ---- Identity: tensors, sequences and optionals alike ---- */

static kn_status infer_identity(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (!in[0]) return kn_diag(cx, n, KN_EINVAL, "input 0 is required");
    out[0] = in[0]->type;
    return KN_OK;
}

static kn_status eval_identity(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                               kn_tensor **out) {
    (void)ex;
    (void)n;
    if (in[0]->type.kind != KN_KIND_TENSOR || !out[0])
        out[0] = in[0];
    else
        kn_copy_all(out[0], in[0]);
    return KN_OK;
}

/* ---- Shape, Size ---- */

/* Shape-15's [start, end) range over a rank-r shape, clamped. */
static void shape_range(kn_ctx *cx, const kn_node *n, int r, int64_t *s, int64_t *e) {
    *s = kn_attr_int(cx, n, "start", 0);
    *e = kn_attr_int(cx, n, "end", r);
    if (*s < 0) *s += r;
    if (*e < 0) *e += r;
    *s = *s < 0 ? 0 : *s > r ? r : *s;
    *e = *e < 0 ? 0 : *e > r ? r : *e;
    if (*e < *s) *e = *s;
}

static kn_status infer_shape(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    int64_t len = -1;
    if (in[0]->type.rank >= 0) {
        int64_t s, e;
        shape_range(cx, n, in[0]->type.rank, &s, &e);
        len = e - s;
    }
    if (kn_failed(cx)) return cx->status;
    out[0] = kn_type_make(KN_I64, 1, &len);
    return KN_OK;
}

static kn_status eval_shape(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_shape);
    if (st) return st;
    int64_t s, e;
    shape_range(kn_exec_ctx(ex), n, in[0]->type.rank, &s, &e);
    for (int64_t i = s; i < e; i++) ((int64_t *)out[0]->data)[i - s] = in[0]->type.dims[i];
    return KN_OK;
}

static kn_status infer_size(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    out[0] = kn_type_scalar(KN_I64);
    return KN_OK;
}

static kn_status eval_size(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_size);
    if (st) return st;
    ((int64_t *)out[0]->data)[0] = kn_tensor_numel(in[0]);
    return KN_OK;
}

/* ---- Ops that only reinterpret the shape: Reshape, Flatten, Squeeze, Unsqueeze ---- */

static kn_status eval_copy(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out,
                           kn_infer_fn infer) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer);
    if (st) return st;
    if (kn_tensor_numel(out[0]) != kn_tensor_numel(in[0]))
        return kn_diag(kn_exec_ctx(ex), n, KN_EINTERNAL, "element count changed");
    kn_copy_all(out[0], in[0]);
    return KN_OK;
}

/* Rank-r type of dtype dt with every dim unknown, or unknown rank if r < 0. */
static kn_type unknown_dims(kn_dtype dt, int r) {
    kn_type t = kn_type_unknown(dt);
    if (r >= 0 && r <= KN_MAX_RANK) {
        t.rank = r;
        for (int i = 0; i < r; i++) t.dims[i] = -1;
    }
    return t;
}

/* Rank of a 1-D input holding a shape or a list, -1 if not known. */
static int list_len(const kn_tensor *t) {
    if (!t || t->type.rank != 1 || t->type.dims[0] < 0 || t->type.dims[0] > KN_MAX_RANK) return -1;
    return (int)t->type.dims[0];
}

static kn_status infer_reshape(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    int allowzero = (int)kn_attr_int(cx, n, "allowzero", 0);
    int64_t shp[KN_MAX_RANK];
    int r;
    if ((st = ints_from(cx, n, in, "shape", 1, 5, shp, KN_MAX_RANK, &r))) return st;
    if (r == -1) return kn_diag(cx, n, KN_EINVAL, "shape is required");
    if (r == -2) {
        out[0] = unknown_dims(x->dtype, list_len(in[1]));
        return KN_OK;
    }
    out[0] = kn_type_make(x->dtype, r, shp);
    int neg = -1;
    for (int i = 0; i < r; i++) {
        if (shp[i] == 0 && !allowzero) {
            if (x->rank < 0) {
                out[0].dims[i] = -1;
            } else if (i >= x->rank) {
                return kn_diag(cx, n, KN_EINVAL, "shape[%d] is 0 but the input has rank %d", i,
                               x->rank);
            } else {
                out[0].dims[i] = x->dims[i];
                out[0].sym[i] = x->sym[i];
            }
        } else if (shp[i] == -1) {
            if (neg >= 0) return kn_diag(cx, n, KN_EINVAL, "shape has more than one -1");
            neg = i;
        } else if (shp[i] < 0) {
            return kn_diag(cx, n, KN_EINVAL, "shape[%d] is %lld", i, (long long)shp[i]);
        }
    }
    int64_t total = kn_type_numel(x);
    int64_t rest = 1;
    for (int i = 0; i < r; i++) {
        if (i == neg) continue;
        if (out[0].dims[i] < 0) rest = -1;
        if (rest >= 0 && out[0].dims[i] && rest > INT64_MAX / out[0].dims[i])
            return kn_diag(cx, n, KN_EINVAL, "shape has too many elements");
        if (rest >= 0) rest *= out[0].dims[i];
    }
    if (neg >= 0) {
        if (total < 0 || rest < 0) {
            out[0].dims[neg] = -1;
        } else if (rest == 0 || total % rest) {
            return kn_diag(cx, n, KN_EINVAL, "cannot reshape %lld elements with a -1 dim",
                           (long long)total);
        } else {
            out[0].dims[neg] = total / rest;
        }
    } else if (total >= 0 && rest >= 0 && total != rest) {
        return kn_diag(cx, n, KN_EINVAL, "cannot reshape %lld elements into %lld", (long long)total,
                       (long long)rest);
    }
    return kn_failed(cx) ? cx->status : KN_OK;
}

static kn_status eval_reshape(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    return eval_copy(ex, n, in, out, infer_reshape);
}

static kn_status infer_flatten(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    int64_t axis = kn_attr_int(cx, n, "axis", 1);
    if (kn_failed(cx)) return cx->status;
    out[0] = unknown_dims(x->dtype, 2);
    if (x->rank < 0) return KN_OK;
    /* axis in [-rank, rank]; a negative one counts from the rank, not rank + 1. */
    if (axis < -x->rank || axis > x->rank)
        return kn_diag(cx, n, KN_EINVAL, "axis %lld is out of range for rank %d", (long long)axis,
                       x->rank);
    int a = (int)(axis < 0 ? axis + x->rank : axis);
    out[0].dims[0] = kn_prod_or_unknown(x->dims, 0, a);
    out[0].dims[1] = kn_prod_or_unknown(x->dims, a, x->rank);
    /* a product of one symbolic dim is that dim: [N,C,H,W] axis 1 gives [N,C*H*W] */
    if (a == 1) out[0].sym[0] = x->sym[0];
    if (a == x->rank - 1) out[0].sym[1] = x->sym[a];
    return KN_OK;
}

static kn_status eval_flatten(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    return eval_copy(ex, n, in, out, infer_flatten);
}

static kn_status infer_squeeze(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    int64_t axes[KN_MAX_RANK];
    int na;
    if ((st = ints_from(cx, n, in, "axes", 1, 13, axes, KN_MAX_RANK, &na))) return st;
    out[0] = kn_type_unknown(x->dtype);
    if (na == -2 || x->rank < 0) return KN_OK;
    bool drop[KN_MAX_RANK] = {0};
    if (na == -1) {
        for (int i = 0; i < x->rank; i++) {
            if (x->dims[i] < 0) return KN_OK; /* might be 1 */
            drop[i] = x->dims[i] == 1;
        }
    }
    for (int i = 0; i < na; i++) {
        int a;
        if ((st = kn_axis(cx, n, axes[i], x->rank, 0, &a))) return st;
        if (drop[a]) return kn_diag(cx, n, KN_EINVAL, "axis %d is repeated", a);
        if (x->dims[a] > 1 || x->dims[a] == 0)
            return kn_diag(cx, n, KN_EINVAL, "cannot squeeze axis %d of extent %lld", a,
                           (long long)x->dims[a]);
        drop[a] = true;
    }
    out[0].kind = KN_KIND_TENSOR;
    out[0].rank = 0;
    for (int i = 0; i < x->rank; i++) {
        if (drop[i]) continue;
        out[0].sym[out[0].rank] = x->sym[i];
        out[0].dims[out[0].rank++] = x->dims[i];
    }
    return KN_OK;
}

static kn_status eval_squeeze(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    return eval_copy(ex, n, in, out, infer_squeeze);
}

static kn_status infer_unsqueeze(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    int64_t axes[KN_MAX_RANK];
    int na;
    if ((st = ints_from(cx, n, in, "axes", 1, 13, axes, KN_MAX_RANK, &na))) return st;
    if (na == -1) return kn_diag(cx, n, KN_EINVAL, "axes are required");
    out[0] = kn_type_unknown(x->dtype);
    if (na == -2 || x->rank < 0) return KN_OK;
    int r = x->rank + na;
    if (r > KN_MAX_RANK) return kn_diag(cx, n, KN_EUNSUPPORTED, "output rank %d is too large", r);
    bool ins[KN_MAX_RANK] = {0};
    for (int i = 0; i < na; i++) {
        int a;
        if ((st = kn_axis(cx, n, axes[i], r, 0, &a))) return st;
        if (ins[a]) return kn_diag(cx, n, KN_EINVAL, "axis %d is repeated", a);
        ins[a] = true;
    }
    out[0].kind = KN_KIND_TENSOR;
    out[0].rank = r;
    for (int i = 0, k = 0; i < r; i++) {
        if (ins[i]) {
            out[0].dims[i] = 1;
        } else {
            out[0].dims[i] = x->dims[k];
            out[0].sym[i] = x->sym[k++];
        }
    }
    return KN_OK;
}

static kn_status eval_unsqueeze(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                kn_tensor **out) {
    return eval_copy(ex, n, in, out, infer_unsqueeze);
}

/* ---- Expand, Transpose ---- */

static kn_status infer_expand(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st || (st = kn_need_tensor(cx, n, in, 1))) return st;
    if (!kn_data_known(in[1])) {
        out[0] = kn_type_unknown(in[0]->type.dtype);
        return KN_OK;
    }
    int64_t shp[KN_MAX_RANK];
    int r;
    if ((st = read_ints(cx, n, in[1], 1, shp, KN_MAX_RANK, &r))) return st;
    for (int i = 0; i < r; i++)
        if (shp[i] < 0)
            return kn_diag(cx, n, KN_EINVAL, "shape[%d] is negative (%lld)", i, (long long)shp[i]);
    kn_type s = kn_type_make(in[0]->type.dtype, r, shp);
    const kn_type *both[2] = {&in[0]->type, &s};
    out[0] = kn_type_unknown(in[0]->type.dtype);
    return kn_broadcast(cx, n, 2, both, &out[0]);
}

static kn_status eval_expand(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_expand);
    if (st) return st;
    const kn_type *o = &out[0]->type;
    int64_t strides[KN_MAX_RANK];
    kn_bcast_strides(&in[0]->type, o->rank, o->dims, strides);
    int64_t cnt = kn_tensor_numel(out[0]);
    size_t es = kn_elem_size(o->dtype);
    for (int64_t i = 0; i < cnt; i++)
        kn_copy_elem(out[0]->data, i, in[0]->data, kn_bcast_offset(i, o->rank, o->dims, strides),
                     es);
    return KN_OK;
}

/* Checks perm (np entries; absent if np < 0: reversed) against rank r into p. */
static kn_status transpose_perm(kn_ctx *cx, const kn_node *n, int r, int *p) {
    const int64_t *perm;
    int np = kn_attr_ints(cx, n, "perm", &perm);
    if (kn_failed(cx)) return cx->status;
    if (np < 0) {
        for (int i = 0; i < r; i++) p[i] = r - 1 - i;
        return KN_OK;
    }
    if (np != r)
        return kn_diag(cx, n, KN_EINVAL, "perm has %d entries for an input of rank %d", np, r);
    bool seen[KN_MAX_RANK] = {0};
    for (int i = 0; i < r; i++) {
        if (perm[i] < 0 || perm[i] >= r || seen[perm[i]])
            return kn_diag(cx, n, KN_EINVAL, "perm is not a permutation of 0..%d", r - 1);
        seen[perm[i]] = true;
        p[i] = (int)perm[i];
    }
    return KN_OK;
}

static kn_status infer_transpose(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    out[0] = *x;
    if (x->rank < 0) return KN_OK;
    int p[KN_MAX_RANK];
    if ((st = transpose_perm(cx, n, x->rank, p))) return st;
    for (int i = 0; i < x->rank; i++) {
        out[0].dims[i] = x->dims[p[i]];
        out[0].sym[i] = x->sym[p[i]];
    }
    return KN_OK;
}

static kn_status eval_transpose(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_transpose);
    if (st) return st;
    const kn_type *x = &in[0]->type, *o = &out[0]->type;
    int r = x->rank, p[KN_MAX_RANK];
    if ((st = transpose_perm(kn_exec_ctx(ex), n, r, p))) return st;
    int64_t xs[KN_MAX_RANK], os[KN_MAX_RANK];
    kn_strides(r, x->dims, xs);
    for (int i = 0; i < r; i++) os[i] = xs[p[i]]; /* input stride of output axis i */
    int64_t cnt = kn_tensor_numel(out[0]);
    size_t es = kn_elem_size(x->dtype);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t rem = i, off = 0;
        for (int d = r - 1; d >= 0; d--) {
            off += (rem % o->dims[d]) * os[d];
            rem /= o->dims[d];
        }
        kn_copy_elem(out[0]->data, i, in[0]->data, off, es);
    }
    return KN_OK;
}

/* ---- Concat, Split ---- */

static kn_status infer_concat(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st;
    for (int i = 0; i < n->nin; i++)
        if ((st = kn_need_tensor(cx, n, in, i))) return st;
    int64_t axis = kn_attr_int(cx, n, "axis", n->opset < 4 ? 1 : INT64_MIN);
    if (kn_failed(cx)) return cx->status;
    if (axis == INT64_MIN) return kn_diag(cx, n, KN_EINVAL, "attribute axis is required");
    kn_dtype dt = in[0]->type.dtype;
    int r = -1;
    for (int i = 0; i < n->nin; i++) {
        const kn_type *t = &in[i]->type;
        if (t->dtype != dt)
            return kn_diag(cx, n, KN_EINVAL, "input %d is %s, input 0 is %s", i,
                           kn_dtype_name(t->dtype), kn_dtype_name(dt));
        if (t->rank < 0) continue;
        if (r >= 0 && t->rank != r)
            return kn_diag(cx, n, KN_EINVAL, "input %d has rank %d, expected %d", i, t->rank, r);
        r = t->rank;
    }
    out[0] = kn_type_unknown(dt);
    if (r < 0) return KN_OK;
    int a;
    if ((st = kn_axis(cx, n, axis, r, 0, &a))) return st;
    out[0] = unknown_dims(dt, r);
    out[0].dims[a] = 0;
    for (int i = 0; i < n->nin; i++) {
        const kn_type *t = &in[i]->type;
        if (t->rank < 0) {
            out[0].dims[a] = -1;
            continue;
        }
        for (int d = 0; d < r; d++) {
            if (d == a) {
                if (t->dims[d] < 0 || out[0].dims[a] < 0)
                    out[0].dims[a] = -1;
                else
                    out[0].dims[a] += t->dims[d];
            } else if (out[0].dims[d] < 0) {
                out[0].dims[d] = t->dims[d];
                out[0].sym[d] = t->sym[d];
            } else if (t->dims[d] >= 0 && t->dims[d] != out[0].dims[d]) {
                return kn_diag(cx, n, KN_EINVAL, "input %d has dim %d = %lld, expected %lld", i, d,
                               (long long)t->dims[d], (long long)out[0].dims[d]);
            }
        }
    }
    return KN_OK;
}

static kn_status eval_concat(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_concat);
    if (st) return st;
    const kn_type *o = &out[0]->type;
    int a;
    kn_axis(kn_exec_ctx(ex), n, kn_attr_int(kn_exec_ctx(ex), n, "axis", 1), o->rank, 0, &a);
    int64_t outer = kn_prod(o->dims, 0, a), inner = kn_prod(o->dims, a + 1, o->rank);
    size_t es = kn_elem_size(o->dtype);
    char *dst = out[0]->data;
    for (int64_t k = 0; k < outer; k++) {
        for (int i = 0; i < n->nin; i++) {
            size_t nb = (size_t)(in[i]->type.dims[a] * inner) * es;
            if (!nb) continue;
            memcpy(dst, (const char *)in[i]->data + (size_t)k * nb, nb);
            dst += nb;
        }
    }
    return KN_OK;
}

#define SPLIT_MAX 255

/* Sizes of the n->nout parts along axis a of x. *unknown when not known statically. */
static kn_status split_sizes(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, const kn_type *x,
                             int a, int64_t *sizes, bool *unknown) {
    int ns;
    kn_status st = ints_from(cx, n, in, "split", 1, 13, sizes, SPLIT_MAX, &ns);
    /* Split-1 also accepted the sizes as an optional second input. */
    if (!st && ns == -1 && n->opset < 2)
        st = ints_from(cx, n, in, "split", 1, 0, sizes, SPLIT_MAX, &ns);
    if (st) return st;
    *unknown = ns == -2;
    if (ns == -2) return KN_OK;
    int64_t d = x->dims[a];
    if (ns >= 0) {
        if (ns != n->nout)
            return kn_diag(cx, n, KN_EINVAL, "split has %d sizes for %d outputs", ns, n->nout);
        int64_t sum = 0;
        for (int i = 0; i < ns; i++) {
            if (sizes[i] < 0)
                return kn_diag(cx, n, KN_EINVAL, "split[%d] is negative (%lld)", i,
                               (long long)sizes[i]);
            sum += sizes[i];
        }
        if (d >= 0 && sum != d)
            return kn_diag(cx, n, KN_EINVAL, "split sizes add up to %lld, the axis has %lld",
                           (long long)sum, (long long)d);
        return KN_OK;
    }
    int64_t parts = n->opset >= 18 ? kn_attr_int(cx, n, "num_outputs", -1) : -1;
    if (kn_failed(cx)) return cx->status;
    if (n->opset >= 18 && parts != n->nout)
        return kn_diag(cx, n, KN_EINVAL,
                       parts < 0 ? "needs a split input or num_outputs (opset 18)"
                                 : "num_outputs is %lld, the node has %d outputs",
                       (long long)parts, n->nout);
    if (d < 0) {
        *unknown = true;
        return KN_OK;
    }
    /* Equal parts; the last one is smaller when the extent does not divide (opset 18
     * says so; earlier opsets required an even split). */
    int64_t chunk = (d + n->nout - 1) / n->nout;
    for (int i = 0; i < n->nout; i++) {
        int64_t left = d - chunk * i;
        sizes[i] = left < 0 ? 0 : left < chunk ? left : chunk;
    }
    return KN_OK;
}

static kn_status infer_split(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    int64_t axis = kn_attr_int(cx, n, "axis", 0);
    if (kn_failed(cx)) return cx->status;
    for (int j = 0; j < n->nout; j++) out[j] = kn_type_unknown(x->dtype);
    if (x->rank < 0) return KN_OK;
    int a;
    if ((st = kn_axis(cx, n, axis, x->rank, 0, &a))) return st;
    int64_t sizes[SPLIT_MAX];
    bool unknown;
    if ((st = split_sizes(cx, n, in, x, a, sizes, &unknown))) return st;
    for (int j = 0; j < n->nout; j++) {
        out[j] = *x;
        out[j].dims[a] = unknown ? -1 : sizes[j];
        out[j].sym[a] = NULL;
    }
    return KN_OK;
}

static kn_status eval_split(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_split);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    int a;
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_axis(cx, n, kn_attr_int(cx, n, "axis", 0), x->rank, 0, &a);
    int64_t outer = kn_prod(x->dims, 0, a), inner = kn_prod(x->dims, a + 1, x->rank);
    size_t es = kn_elem_size(x->dtype);
    const char *src = in[0]->data;
    for (int64_t k = 0; k < outer; k++) {
        for (int j = 0; j < n->nout; j++) {
            size_t nb = (size_t)(out[j]->type.dims[a] * inner) * es;
            if (!nb) continue;
            memcpy((char *)out[j]->data + (size_t)k * nb, src, nb);
            src += nb;
        }
    }
    return KN_OK;
}

/* ---- Slice ---- */

/* Per-axis start, step and output extent of a Slice of x (rank known); sliced[d]
 * tells whether axis d is among the sliced axes. *unknown when the parameters are
 * not known statically. Unknown input dims give -1 extents. */
static kn_status slice_params(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, const kn_type *x,
                              int64_t *start, int64_t *step, int64_t *ext, bool *sliced,
                              bool *unknown) {
    int r = x->rank;
    int64_t st_[KN_MAX_RANK], en[KN_MAX_RANK], ax[KN_MAX_RANK], sp[KN_MAX_RANK];
    int ns, ne, na, np = -1;
    kn_status st;
    if ((st = ints_from(cx, n, in, "starts", 1, 10, st_, KN_MAX_RANK, &ns))) return st;
    if ((st = ints_from(cx, n, in, "ends", 2, 10, en, KN_MAX_RANK, &ne))) return st;
    if ((st = ints_from(cx, n, in, "axes", 3, 10, ax, KN_MAX_RANK, &na))) return st;
    if (n->opset >= 10 && (st = ints_from(cx, n, in, "steps", 4, 10, sp, KN_MAX_RANK, &np)))
        return st;
    *unknown = ns == -2 || ne == -2 || na == -2 || np == -2;
    if (*unknown) return KN_OK;
    if (ns < 0 || ne < 0) return kn_diag(cx, n, KN_EINVAL, "starts and ends are required");
    if (ns != ne) return kn_diag(cx, n, KN_EINVAL, "%d starts but %d ends", ns, ne);
    if (na >= 0 && na != ns) return kn_diag(cx, n, KN_EINVAL, "%d axes for %d starts", na, ns);
    if (np >= 0 && np != ns) return kn_diag(cx, n, KN_EINVAL, "%d steps for %d starts", np, ns);
    for (int d = 0; d < r; d++) {
        start[d] = 0;
        step[d] = 1;
        ext[d] = x->dims[d];
        sliced[d] = false;
    }
    for (int i = 0; i < ns; i++) {
        int a = i;
        if (na >= 0 && (st = kn_axis(cx, n, ax[i], r, 0, &a))) return st;
        if (a >= r) return kn_diag(cx, n, KN_EINVAL, "%d starts for rank %d", ns, r);
        if (sliced[a]) return kn_diag(cx, n, KN_EINVAL, "axis %d is repeated", a);
        sliced[a] = true;
        int64_t s = st_[i], e = en[i], k = np >= 0 ? sp[i] : 1, d = x->dims[a];
        if (k == 0) return kn_diag(cx, n, KN_EINVAL, "steps[%d] is 0", i);
        step[a] = k;
        if (d < 0) {
            ext[a] = -1;
            continue;
        }
        if (s < 0) s += d;
        if (e < 0) e += d;
        if (k > 0) {
            s = s < 0 ? 0 : s > d ? d : s;
            e = e < 0 ? 0 : e > d ? d : e;
            ext[a] = e > s ? 1 + (e - s - 1) / k : 0;
        } else {
            s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
            e = e < -1 ? -1 : e > d - 1 ? d - 1 : e;
            ext[a] = s > e ? 1 + (s - e - 1) / (k == INT64_MIN ? INT64_MAX : -k) : 0;
        }
        start[a] = s;
    }
    return KN_OK;
}

static kn_status infer_slice(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    out[0] = kn_type_unknown(x->dtype);
    if (x->rank < 0) return KN_OK;
    int64_t start[KN_MAX_RANK], step[KN_MAX_RANK], ext[KN_MAX_RANK];
    bool sliced[KN_MAX_RANK], unknown;
    if ((st = slice_params(cx, n, in, x, start, step, ext, sliced, &unknown))) return st;
    if (unknown) {
        out[0] = unknown_dims(x->dtype, x->rank);
        return KN_OK;
    }
    out[0] = kn_type_make(x->dtype, x->rank, ext);
    for (int d = 0; d < x->rank; d++)
        if (!sliced[d]) out[0].sym[d] = x->sym[d];
    return KN_OK;
}

static kn_status eval_slice(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_slice);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    int r = x->rank;
    int64_t start[KN_MAX_RANK], step[KN_MAX_RANK], ext[KN_MAX_RANK], xs[KN_MAX_RANK];
    bool sliced[KN_MAX_RANK], unknown;
    if ((st = slice_params(kn_exec_ctx(ex), n, in, x, start, step, ext, sliced, &unknown)))
        return st;
    kn_strides(r, x->dims, xs);
    int64_t cnt = kn_tensor_numel(out[0]);
    size_t es = kn_elem_size(x->dtype);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t rem = i, off = 0;
        for (int d = r - 1; d >= 0; d--) {
            off += (start[d] + (rem % ext[d]) * step[d]) * xs[d];
            rem /= ext[d];
        }
        kn_copy_elem(out[0]->data, i, in[0]->data, off, es);
    }
    return KN_OK;
}

/* ---- Pad ---- */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };
#define PAD_MAX ((int64_t)1 << 48) /* far above any real tensor; keeps the sums exact */

kn_status kn_pad_axes(kn_ctx *cx, const kn_node *n, int r, const int64_t *axes, int na,
                      int64_t *pads, int np) {
    if (np != 2 * na) return kn_diag(cx, n, KN_EINVAL, "%d pads for %d axes", np, na);
    int64_t full[2 * KN_MAX_RANK] = {0};
    for (int i = 0; i < na; i++) {
        int a;
        if (kn_axis(cx, n, axes[i], r, 0, &a)) return cx->status;
        full[a] = pads[i];
        full[r + a] = pads[na + i];
    }
    memcpy(pads, full, (size_t)(2 * r) * sizeof *pads);
    return KN_OK;
}

/* Pad's mode and pads (begin values for every axis, then end values) for rank r.
 * *unknown when the pads are not known statically. */
static kn_status pad_params(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, int r, int *mode,
                            int64_t *pads, bool *unknown) {
    const char *m = kn_attr_str(cx, n, "mode", "constant");
    if (kn_failed(cx)) return cx->status;
    if (!strcmp(m, "constant"))
        *mode = PAD_CONSTANT;
    else if (!strcmp(m, "reflect"))
        *mode = PAD_REFLECT;
    else if (!strcmp(m, "edge"))
        *mode = PAD_EDGE;
    else if (!strcmp(m, "wrap") && n->opset >= 19)
        *mode = PAD_WRAP;
    else
        return kn_diag(cx, n, KN_EINVAL, "unknown mode '%s'", m);
    int np, na = -1;
    int64_t axes[KN_MAX_RANK];
    kn_status st =
        ints_from(cx, n, in, n->opset < 2 ? "paddings" : "pads", 1, 11, pads, 2 * KN_MAX_RANK, &np);
    if (!st && n->opset >= 18) st = ints_from(cx, n, in, "axes", 3, 18, axes, KN_MAX_RANK, &na);
    if (st) return st;
    *unknown = np == -2 || na == -2;
    if (*unknown) return KN_OK;
    if (np == -1) return kn_diag(cx, n, KN_EINVAL, "pads are required");
    if (na >= 0) /* opset 18: pads for the listed axes only, the others 0 */
        return kn_pad_axes(cx, n, r, axes, na, pads, np);
    if (np != 2 * r) return kn_diag(cx, n, KN_EINVAL, "%d pads for an input of rank %d", np, r);
    return KN_OK;
}

static kn_status infer_pad(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    /* T is float before opset 11 (the fill is a float attribute), numeric before 13 */
    unsigned types = n->opset < 11 ? KN_DT_FLOAT : n->opset < 13 ? KN_DT_NUM : KN_DT_ANY;
    if (in[0]->type.dtype && (st = kn_check_dtype(cx, n, in[0], 0, types))) return st;
    const kn_type *x = &in[0]->type;
    out[0] = kn_type_unknown(x->dtype);
    if (x->rank < 0) return KN_OK;
    int mode;
    int64_t pads[2 * KN_MAX_RANK];
    bool unknown;
    if ((st = pad_params(cx, n, in, x->rank, &mode, pads, &unknown))) return st;
    out[0] = unknown_dims(x->dtype, x->rank);
    if (unknown) return KN_OK;
    for (int d = 0; d < x->rank; d++) {
        if (x->dims[d] < 0) continue;
        int64_t lo = pads[d], hi = pads[x->rank + d];
        if (lo > PAD_MAX || lo < -PAD_MAX || hi > PAD_MAX || hi < -PAD_MAX)
            return kn_diag(cx, n, KN_EINVAL, "pad of axis %d is too large", d);
        int64_t e = x->dims[d] + lo + hi;
        if (e < 0) return kn_diag(cx, n, KN_EINVAL, "pads make axis %d negative", d);
        if (mode != PAD_CONSTANT && x->dims[d] == 0 && e > 0)
            return kn_diag(cx, n, KN_EINVAL, "cannot pad empty axis %d in this mode", d);
        out[0].dims[d] = e;
        if (!lo && !hi) out[0].sym[d] = x->sym[d];
    }
    return KN_OK;
}

/* Input coordinate for output coordinate c (already shifted by the pad) of an axis of
 * extent e in the given mode; sets *outside in constant mode when c falls in the pad. */
static int64_t pad_coord(int mode, int64_t c, int64_t e, bool *outside) {
    if (c >= 0 && c < e) return c;
    if (mode == PAD_CONSTANT) {
        *outside = true;
        return 0;
    }
    if (mode == PAD_EDGE) return c < 0 ? 0 : e - 1;
    if (mode == PAD_WRAP) return (c % e + e) % e;
    if (e == 1) return 0;
    /* Reflection is a triangle wave of period 2 (e - 1): fold once, however far c is. */
    int64_t p = 2 * (e - 1);
    c = (c % p + p) % p;
    return c < e ? c : p - c;
}

/* Where output row rw (all coordinates but the last) reads from: *outside when it lies
 * in a constant pad, else *base, the offset of its input row, and *twin, the output row
 * whose outer coordinates are that input row's (rw itself when every coordinate is
 * inside the input, -1 when the twin was cropped away). */
static void pad_row_source(int mode, int last, int64_t rw, const int64_t *odims,
                           const int64_t *xdims, const int64_t *xs, const int64_t *pads,
                           bool *outside, int64_t *base, int64_t *twin) {
    int64_t rem = rw, tw = 0, tstride = 1;
    *outside = false;
    *base = 0;
    for (int d = last - 1; d >= 0; d--) {
        int64_t c = pad_coord(mode, rem % odims[d] - pads[d], xdims[d], outside);
        int64_t t = c + pads[d];
        rem /= odims[d];
        *base += c * xs[d];
        if (tw >= 0 && t >= 0 && t < odims[d])
            tw += t * tstride;
        else
            tw = -1;
        tstride *= odims[d];
    }
    *twin = tw;
}

/* Builds output row rw of length row: its middle is a straight copy of the input row at
 * base, its ends are worked out element by element. */
static void pad_row(int mode, int r, int64_t row, int64_t rw, bool outside, int64_t base,
                    int64_t xlast, int64_t plast, void *od, const void *xd, const void *fill,
                    size_t es) {
    int64_t j0 = 0, j1 = 0;
    if (r && !outside) {
        j0 = plast > 0 ? plast : 0;
        j1 = plast + xlast < row ? plast + xlast : row;
        if (j1 > j0)
            memcpy((char *)od + (size_t)(rw * row + j0) * es,
                   (const char *)xd + (size_t)(base + j0 - plast) * es, (size_t)(j1 - j0) * es);
        else
            j1 = j0 = 0;
    }
    for (int64_t j = 0; j < row; j++) {
        if (j == j0 && j1 > j0) j = j1;
        if (j >= row) break;
        bool out_j = outside;
        int64_t off = base;
        if (r) off += pad_coord(mode, j - plast, xlast, &out_j);
        if (out_j)
            kn_copy_elem(od, rw * row + j, fill, 0, es);
        else
            kn_copy_elem(od, rw * row + j, xd, off, es);
    }
}

static kn_status eval_pad(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_pad);
    if (st) return st;
    const kn_type *x = &in[0]->type, *o = &out[0]->type;
    int r = x->rank, mode;
    int64_t pads[2 * KN_MAX_RANK], xs[KN_MAX_RANK];
    bool unknown;
    if ((st = pad_params(kn_exec_ctx(ex), n, in, r, &mode, pads, &unknown))) return st;
    kn_strides(r, x->dims, xs);
    /* The fill value, as one element of the output's dtype. */
    kn_tensor *fill = kn_tensor_make(kn_exec_arena(ex), x->dtype, 0, NULL);
    const kn_tensor *cv = kn_opt_in(n, in, 2);
    if (n->opset < 11)
        kn_store_f64(fill->data, x->dtype, 0, kn_attr_float(kn_exec_ctx(ex), n, "value", 0));
    else if (cv && kn_tensor_numel(cv) > 0)
        kn_copy_elem(fill->data, 0, cv->data, 0, kn_elem_size(x->dtype));
    int64_t cnt = kn_tensor_numel(out[0]);
    size_t es = kn_elem_size(x->dtype);
    if (!cnt) return KN_OK;
    /* Row by row along the last axis. Pass 1 builds the rows that read an input row
     * directly (every outer coordinate inside the input, or a mapped row with no such
     * twin) and one fill row; pass 2 copies every other row from its twin: the row
     * whose outer coordinates are the input coordinates it maps to. A pad far larger
     * than its input thus costs a memcpy a row. */
    int last = r - 1;
    int64_t row = r ? o->dims[last] : 1, rows = cnt / row, fill_row = -1;
    char *od = out[0]->data;
    size_t row_bytes = (size_t)row * es;
    for (int pass = 1; pass <= 2; pass++) {
        for (int64_t rw = 0; rw < rows; rw++) {
            int64_t twin, base;
            bool outside;
            pad_row_source(mode, last, rw, o->dims, x->dims, xs, pads, &outside, &base, &twin);
            char *dst = od + (size_t)rw * row_bytes;
            if (outside && fill_row >= 0) {
                if (pass == 2 && rw != fill_row)
                    memcpy(dst, od + (size_t)fill_row * row_bytes, row_bytes);
                continue;
            }
            if (!outside && twin != rw && twin >= 0) {
                if (pass == 2) memcpy(dst, od + (size_t)twin * row_bytes, row_bytes);
                continue;
            }
            if (pass == 2) continue;
            if (outside) fill_row = rw;
            pad_row(mode, r, row, rw, outside, base, x->dims[r ? last : 0], pads[r ? last : 0],
                    out[0]->data, in[0]->data, fill->data, es);
        }
    }
    return KN_OK;
}

/* ---- Range, Tile ---- */

static kn_status infer_range(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st;
    for (int i = 0; i < 3; i++)
        if ((st = kn_check_dtype(cx, n, in[i], i, KN_DT_NUM))) return st;
    kn_dtype dt = in[0]->type.dtype;
    for (int i = 1; i < 3; i++)
        if (in[i]->type.dtype != dt)
            return kn_diag(cx, n, KN_EINVAL, "input %d is %s, start is %s", i,
                           kn_dtype_name(in[i]->type.dtype), kn_dtype_name(dt));
    int64_t len = -1;
    if (kn_data_known(in[0]) && kn_data_known(in[1]) && kn_data_known(in[2])) {
        for (int i = 0; i < 3; i++)
            if (kn_tensor_numel(in[i]) != 1)
                return kn_diag(cx, n, KN_EINVAL, "input %d must be a scalar", i);
        double s = kn_load_f64(in[0]->data, dt, 0), l = kn_load_f64(in[1]->data, dt, 0),
               d = kn_load_f64(in[2]->data, dt, 0);
        if (d == 0) return kn_diag(cx, n, KN_EINVAL, "delta is 0");
        if (kn_dtype_get(dt)->is_int) {
            int64_t si = kn_load_i64(in[0]->data, dt, 0), li = kn_load_i64(in[1]->data, dt, 0),
                    di = kn_load_i64(in[2]->data, dt, 0);
            /* Unsigned differences are exact for any int64 endpoints. */
            uint64_t ulen = 0;
            if (di > 0 && li > si) ulen = 1 + ((uint64_t)li - (uint64_t)si - 1) / (uint64_t)di;
            if (di < 0 && si > li)
                ulen = 1 + ((uint64_t)si - (uint64_t)li - 1) / (0 - (uint64_t)di);
            if (ulen > (uint64_t)1 << 50) return kn_diag(cx, n, KN_EINVAL, "range is too long");
            len = (int64_t)ulen;
        } else {
            double c = ceil((l - s) / d);
            if (!(c < 1e15)) return kn_diag(cx, n, KN_EINVAL, "range is too long");
            len = c > 0 ? (int64_t)c : 0;
        }
    }
    out[0] = kn_type_make(dt, 1, &len);
    return KN_OK;
}

static kn_status eval_range(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_range);
    if (st) return st;
    kn_dtype dt = in[0]->type.dtype;
    int64_t len = out[0]->type.dims[0];
    if (kn_dtype_get(dt)->is_int) {
        int64_t s = kn_load_i64(in[0]->data, dt, 0), d = kn_load_i64(in[2]->data, dt, 0);
        /* Every value lies between start and limit; wrapping arithmetic gets it exactly. */
        for (int64_t i = 0; i < len; i++)
            kn_store_i64(out[0]->data, dt, (size_t)i,
                         (int64_t)((uint64_t)s + (uint64_t)i * (uint64_t)d));
    } else {
        double s = kn_load_f64(in[0]->data, dt, 0), d = kn_load_f64(in[2]->data, dt, 0);
        for (int64_t i = 0; i < len; i++)
            kn_store_f64(out[0]->data, dt, (size_t)i, s + (double)i * d);
    }
    return KN_OK;
}

/* Repeat counts for every axis of x (rank known); Tile-1 takes (tiles, axis) scalars.
 * *unknown when they are not known statically. */
static kn_status tile_repeats(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, const kn_type *x,
                              int64_t *rep, bool *unknown) {
    kn_status st;
    *unknown = !kn_data_known(in[1]);
    if (n->opset < 6 && n->nin == 3) {
        if ((st = kn_need_tensor(cx, n, in, 2))) return st;
        *unknown = *unknown || !kn_data_known(in[2]);
        if (*unknown) return KN_OK;
        int64_t tiles = 0, axis = 0;
        int a;
        if ((st = scalar_i64(cx, n, in[1], 1, &tiles)) || (st = scalar_i64(cx, n, in[2], 2, &axis)))
            return st;
        if ((st = kn_axis(cx, n, axis, x->rank, 0, &a))) return st;
        for (int d = 0; d < x->rank; d++) rep[d] = d == a ? tiles : 1;
    } else {
        if (*unknown) return KN_OK;
        int nr;
        if ((st = read_ints(cx, n, in[1], 1, rep, KN_MAX_RANK, &nr))) return st;
        if (nr != x->rank)
            return kn_diag(cx, n, KN_EINVAL, "%d repeats for an input of rank %d", nr, x->rank);
    }
    for (int d = 0; d < x->rank; d++)
        if (rep[d] < 0)
            return kn_diag(cx, n, KN_EINVAL, "repeat count %lld is negative", (long long)rep[d]);
    return KN_OK;
}

static kn_status infer_tile(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st || (st = kn_need_tensor(cx, n, in, 1))) return st;
    const kn_type *x = &in[0]->type;
    out[0] = kn_type_unknown(x->dtype);
    if (x->rank < 0) return KN_OK;
    int64_t rep[KN_MAX_RANK];
    bool unknown;
    if ((st = tile_repeats(cx, n, in, x, rep, &unknown))) return st;
    out[0] = unknown_dims(x->dtype, x->rank);
    if (unknown) return KN_OK;
    for (int d = 0; d < x->rank; d++) {
        if (rep[d] && x->dims[d] > INT64_MAX / rep[d])
            return kn_diag(cx, n, KN_EINVAL, "tiled axis %d is too large", d);
        out[0].dims[d] = x->dims[d] < 0 ? -1 : x->dims[d] * rep[d];
    }
    return KN_OK;
}

static kn_status eval_tile(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_tile);
    if (st) return st;
    const kn_type *x = &in[0]->type, *o = &out[0]->type;
    int64_t xs[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xs);
    int64_t cnt = kn_tensor_numel(out[0]);
    size_t es = kn_elem_size(x->dtype);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t rem = i, off = 0;
        for (int d = x->rank - 1; d >= 0; d--) {
            off += (rem % o->dims[d] % x->dims[d]) * xs[d];
            rem /= o->dims[d];
        }
        kn_copy_elem(out[0]->data, i, in[0]->data, off, es);
    }
    return KN_OK;
}

/* ---- DepthToSpace, SpaceToDepth ---- */

/* Blocksize and (DepthToSpace) whether the mode is CRD. */
static kn_status block_params(kn_ctx *cx, const kn_node *n, int64_t *b, bool *crd) {
    *b = kn_attr_int(cx, n, "blocksize", 0);
    const char *mode = kn_attr_str(cx, n, "mode", "DCR");
    if (kn_failed(cx)) return cx->status;
    if (*b < 1) return kn_diag(cx, n, KN_EINVAL, "blocksize must be >= 1");
    if (strcmp(mode, "DCR") && strcmp(mode, "CRD"))
        return kn_diag(cx, n, KN_EINVAL, "unknown mode '%s'", mode);
    *crd = !strcmp(mode, "CRD");
    return KN_OK;
}

static kn_status infer_depthtospace(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                    kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    int64_t b;
    bool crd;
    if ((st = block_params(cx, n, &b, &crd))) return st;
    bool d2s = n->op == KN_OP_DEPTHTOSPACE;
    out[0] = unknown_dims(x->dtype, 4);
    if (x->rank < 0) return KN_OK;
    if (x->rank != 4) return kn_diag(cx, n, KN_EINVAL, "input must be 4-D, has rank %d", x->rank);
    int64_t c = x->dims[1], h = x->dims[2], w = x->dims[3];
    if (d2s && c >= 0 && c % (b * b))
        return kn_diag(cx, n, KN_EINVAL, "%lld channels do not divide by blocksize^2",
                       (long long)c);
    if (!d2s && ((h >= 0 && h % b) || (w >= 0 && w % b)))
        return kn_diag(cx, n, KN_EINVAL, "spatial dims do not divide by blocksize");
    out[0].dims[0] = x->dims[0];
    out[0].sym[0] = x->sym[0];
    out[0].dims[1] = c < 0 ? -1 : d2s ? c / (b * b) : c * b * b;
    out[0].dims[2] = h < 0 ? -1 : d2s ? h * b : h / b;
    out[0].dims[3] = w < 0 ? -1 : d2s ? w * b : w / b;
    return KN_OK;
}

/* Both ops move element (n, c, h*b+i, w*b+j) of the space side to channel
 * (i*b+j)*C + c (DCR) or c*b*b + i*b + j (CRD) at (h, w) of the depth side. */
static kn_status eval_depthtospace(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                   kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_depthtospace);
    if (st) return st;
    int64_t b;
    bool crd;
    if ((st = block_params(kn_exec_ctx(ex), n, &b, &crd))) return st;
    bool d2s = n->op == KN_OP_DEPTHTOSPACE;
    const kn_type *space = d2s ? &out[0]->type : &in[0]->type;
    kn_tensor *deep = d2s ? in[0] : out[0], *flat = d2s ? out[0] : in[0];
    int64_t N = space->dims[0], C = space->dims[1], H = space->dims[2] / b, W = space->dims[3] / b;
    size_t es = kn_elem_size(space->dtype);
    for (int64_t nn = 0; nn < N; nn++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t i = 0; i < b; i++)
                for (int64_t j = 0; j < b; j++) {
                    int64_t dc = crd ? c * b * b + i * b + j : (i * b + j) * C + c;
                    for (int64_t h = 0; h < H; h++)
                        for (int64_t w = 0; w < W; w++) {
                            int64_t so = ((nn * C + c) * H * b + h * b + i) * W * b + w * b + j;
                            int64_t dof = ((nn * C * b * b + dc) * H + h) * W + w;
                            if (d2s)
                                kn_copy_elem(flat->data, so, deep->data, dof, es);
                            else
                                kn_copy_elem(deep->data, dof, flat->data, so, es);
                        }
                }
    return KN_OK;
}

/* ---- EyeLike, Trilu ---- */

static kn_status infer_eyelike(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    int64_t dt = kn_attr_int(cx, n, "dtype", in[0]->type.dtype);
    kn_attr_int(cx, n, "k", 0);
    if (kn_failed(cx)) return cx->status;
    if (!kn_dtype_valid((int)dt) || dt == KN_STRING)
        return kn_diag(cx, n, KN_EINVAL, "dtype %lld is not supported", (long long)dt);
    if (in[0]->type.rank >= 0 && in[0]->type.rank != 2)
        return kn_diag(cx, n, KN_EINVAL, "input must be 2-D, has rank %d", in[0]->type.rank);
    out[0] = in[0]->type;
    out[0].dtype = (kn_dtype)dt;
    return KN_OK;
}

static kn_status eval_eyelike(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_eyelike);
    if (st) return st;
    int64_t k = kn_attr_int(kn_exec_ctx(ex), n, "k", 0);
    int64_t rows = out[0]->type.dims[0], cols = out[0]->type.dims[1];
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            kn_store_i64(out[0]->data, out[0]->type.dtype, (size_t)(i * cols + j), j - i == k);
    return KN_OK;
}

static kn_status infer_trilu(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    kn_attr_int(cx, n, "upper", 1);
    if (kn_failed(cx)) return cx->status;
    if (in[0]->type.rank >= 0 && in[0]->type.rank < 2)
        return kn_diag(cx, n, KN_EINVAL, "input must have rank >= 2, has %d", in[0]->type.rank);
    out[0] = in[0]->type;
    return KN_OK;
}

static kn_status eval_trilu(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_trilu);
    if (st) return st;
    kn_ctx *cx = kn_exec_ctx(ex);
    bool upper = kn_attr_int(cx, n, "upper", 1) != 0;
    int64_t k = 0;
    const kn_tensor *kt = kn_opt_in(n, in, 1);
    if (kt && (st = scalar_i64(cx, n, kt, 1, &k))) return st;
    const kn_type *x = &in[0]->type;
    int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
    int64_t cnt = kn_tensor_numel(in[0]);
    size_t es = kn_elem_size(x->dtype);
    kn_copy_all(out[0], in[0]);
    /* out is a copy; zero what falls outside the kept triangle. */
    kn_tensor *zero = kn_tensor_make(kn_exec_arena(ex), x->dtype, 0, NULL);
    for (int64_t e = 0; e < cnt; e++) {
        int64_t j = e % cols, i = e / cols % rows;
        bool keep = upper ? j - i >= k : j - i <= k;
        if (!keep) kn_copy_elem(out[0]->data, e, zero->data, 0, es);
    }
    return KN_OK;
}

const kn_opimpl kn_ops_tensor[] = {
    {KN_OP_CONSTANT, infer_constant, eval_constant},
    {KN_OP_CONSTANTOFSHAPE, infer_constantofshape, eval_constantofshape},
    {KN_OP_DROPOUT, infer_dropout, eval_dropout},
    {KN_OP_IDENTITY, infer_identity, eval_identity},
    {KN_OP_SHAPE, infer_shape, eval_shape},
    {KN_OP_SIZE, infer_size, eval_size},
    {KN_OP_RESHAPE, infer_reshape, eval_reshape},
    {KN_OP_FLATTEN, infer_flatten, eval_flatten},
    {KN_OP_SQUEEZE, infer_squeeze, eval_squeeze},
    {KN_OP_UNSQUEEZE, infer_unsqueeze, eval_unsqueeze},
    {KN_OP_EXPAND, infer_expand, eval_expand},
    {KN_OP_TRANSPOSE, infer_transpose, eval_transpose},
    {KN_OP_CONCAT, infer_concat, eval_concat},
    {KN_OP_SPLIT, infer_split, eval_split},
    {KN_OP_SLICE, infer_slice, eval_slice},
    {KN_OP_PAD, infer_pad, eval_pad},
    {KN_OP_RANGE, infer_range, eval_range},
    {KN_OP_TILE, infer_tile, eval_tile},
    {KN_OP_DEPTHTOSPACE, infer_depthtospace, eval_depthtospace},
    {KN_OP_SPACETODEPTH, infer_depthtospace, eval_depthtospace},
    {KN_OP_EYELIKE, infer_eyelike, eval_eyelike},
    {KN_OP_TRILU, infer_trilu, eval_trilu},
    {KN_OP_COUNT, 0, 0},
};
