/* Operators of group 'index': ops that select or place elements by index or by
 * value: Gather, GatherElements, GatherND, Scatter (deprecated), ScatterElements,
 * ScatterND, Compress, NonZero, OneHot, ReverseSequence and Unique. See ir/ops.h for
 * the infer/eval contract.
 *
 * As in tensor.c, data movement copies elements as opaque blocks of the dtype's size
 * (kn_copy_elem), so every dtype, strings included, takes the same path; only the
 * scatter reductions and Unique's ordering look at values. Indices may be negative,
 * counting from the end of their axis (fix_index); eval reports one out of range.
 * The output lengths of Compress, NonZero and Unique depend on the data: infer
 * computes them when the deciding input's values are known and leaves the dim
 * unknown (-1) otherwise. */
#include "ir/ops.h"

#include <string.h>

/* ---- Gather, GatherElements, GatherND ---- */

/* Index value idx along an extent d, negative counting from the end; -1 if out of range. */
static int64_t fix_index(int64_t idx, int64_t d) {
    if (idx < 0) idx += d;
    return idx < 0 || idx >= d ? -1 : idx;
}

static kn_status bad_index(kn_ctx *cx, const kn_node *n, int64_t idx, int64_t d) {
    return kn_diag(cx, n, KN_EINVAL, "index %lld is out of range for extent %lld", (long long)idx,
                   (long long)d);
}

static kn_status check_indices(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, int i) {
    kn_status st = kn_need_tensor(cx, n, in, i);
    if (st) return st;
    return kn_check_dtype(cx, n, in[i], i, KN_DT(I32) | KN_DT(I64));
}

static kn_status infer_gather(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st || (st = check_indices(cx, n, in, 1))) return st;
    const kn_type *x = &in[0]->type, *ix = &in[1]->type;
    int64_t axis = kn_attr_int(cx, n, "axis", 0);
    if (kn_failed(cx)) return cx->status;
    out[0] = kn_type_unknown(x->dtype);
    if (x->rank < 0 || ix->rank < 0) return KN_OK;
    int a;
    if ((st = kn_axis(cx, n, axis, x->rank, 0, &a))) return st;
    int r = x->rank - 1 + ix->rank;
    if (r > KN_MAX_RANK) return kn_diag(cx, n, KN_EUNSUPPORTED, "output rank %d is too large", r);
    out[0].kind = KN_KIND_TENSOR;
    out[0].rank = 0;
    for (int d = 0; d < a; d++) out[0].dims[out[0].rank++] = x->dims[d];
    for (int d = 0; d < ix->rank; d++) out[0].dims[out[0].rank++] = ix->dims[d];
    for (int d = a + 1; d < x->rank; d++) out[0].dims[out[0].rank++] = x->dims[d];
    return KN_OK;
}

static kn_status eval_gather(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_gather);
    if (st) return st;
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_type *x = &in[0]->type;
    int a;
    kn_axis(cx, n, kn_attr_int(cx, n, "axis", 0), x->rank, 0, &a);
    int64_t outer = kn_prod(x->dims, 0, a), inner = kn_prod(x->dims, a + 1, x->rank),
            d = x->dims[a];
    int64_t ni = kn_tensor_numel(in[1]);
    size_t blk = (size_t)inner * kn_elem_size(x->dtype);
    char *dst = out[0]->data;
    for (int64_t k = 0; k < outer; k++) {
        for (int64_t j = 0; j < ni; j++) {
            int64_t raw = kn_load_i64(in[1]->data, in[1]->type.dtype, (size_t)j);
            int64_t idx = fix_index(raw, d);
            if (idx < 0) return bad_index(cx, n, raw, d);
            if (blk) memcpy(dst, (const char *)in[0]->data + (size_t)(k * d + idx) * blk, blk);
            dst += blk;
        }
    }
    return KN_OK;
}

static kn_status infer_gatherelements(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                      kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st || (st = check_indices(cx, n, in, 1))) return st;
    const kn_type *x = &in[0]->type, *ix = &in[1]->type;
    int64_t axis = kn_attr_int(cx, n, "axis", 0);
    if (kn_failed(cx)) return cx->status;
    out[0] = *ix;
    out[0].dtype = x->dtype;
    if (x->rank < 0 || ix->rank < 0) return KN_OK;
    if (x->rank != ix->rank)
        return kn_diag(cx, n, KN_EINVAL, "indices have rank %d, data rank %d", ix->rank, x->rank);
    int a;
    return kn_axis(cx, n, axis, x->rank, 0, &a);
}

/* Offset in a tensor of shape `dims` (strides xs) of the element at output
 * position i of shape odims, with coordinate `a` replaced by idx. */
static int64_t offset_with(int64_t i, int r, const int64_t *odims, const int64_t *xs, int a,
                           int64_t idx) {
    int64_t off = 0;
    for (int d = r - 1; d >= 0; d--) {
        int64_t c = i % odims[d];
        i /= odims[d];
        off += (d == a ? idx : c) * xs[d];
    }
    return off;
}

static kn_status eval_gatherelements(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                     kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_gatherelements);
    if (st) return st;
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_type *x = &in[0]->type, *ix = &in[1]->type;
    int a;
    kn_axis(cx, n, kn_attr_int(cx, n, "axis", 0), x->rank, 0, &a);
    int64_t xs[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xs);
    int64_t cnt = kn_tensor_numel(in[1]);
    size_t es = kn_elem_size(x->dtype);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t raw = kn_load_i64(in[1]->data, ix->dtype, (size_t)i);
        int64_t idx = fix_index(raw, x->dims[a]);
        if (idx < 0) return bad_index(cx, n, raw, x->dims[a]);
        kn_copy_elem(out[0]->data, i, in[0]->data, offset_with(i, x->rank, ix->dims, xs, a, idx),
                     es);
    }
    return KN_OK;
}

static kn_status infer_gathernd(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st || (st = kn_check_dtype(cx, n, in[1], 1, KN_DT(I64)))) return st;
    const kn_type *x = &in[0]->type, *ix = &in[1]->type;
    int64_t b = kn_attr_int(cx, n, "batch_dims", 0);
    if (kn_failed(cx)) return cx->status;
    out[0] = kn_type_unknown(x->dtype);
    if (x->rank < 0 || ix->rank < 0) return KN_OK;
    if (ix->rank < 1) return kn_diag(cx, n, KN_EINVAL, "indices must have rank >= 1");
    if (b < 0 || b >= ix->rank || b >= x->rank)
        return kn_diag(cx, n, KN_EINVAL, "batch_dims %lld is out of range", (long long)b);
    int64_t k = ix->dims[ix->rank - 1];
    if (k < 0) return KN_OK;
    if (k < 1 || b + k > x->rank)
        return kn_diag(cx, n, KN_EINVAL, "index tuples of length %lld for data of rank %d",
                       (long long)k, x->rank);
    int r = ix->rank - 1 + x->rank - (int)(b + k);
    if (r > KN_MAX_RANK) return kn_diag(cx, n, KN_EUNSUPPORTED, "output rank %d is too large", r);
    out[0].kind = KN_KIND_TENSOR;
    out[0].rank = 0;
    for (int d = 0; d < ix->rank - 1; d++) out[0].dims[out[0].rank++] = ix->dims[d];
    for (int d = (int)(b + k); d < x->rank; d++) out[0].dims[out[0].rank++] = x->dims[d];
    for (int d = 0; d < b; d++)
        if (x->dims[d] >= 0 && ix->dims[d] >= 0 && x->dims[d] != ix->dims[d])
            return kn_diag(cx, n, KN_EINVAL, "batch dim %d differs between data and indices", d);
    return KN_OK;
}

static kn_status eval_gathernd(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                               kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_gathernd);
    if (st) return st;
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_type *x = &in[0]->type, *ix = &in[1]->type;
    int b = (int)kn_attr_int(cx, n, "batch_dims", 0);
    int k = (int)ix->dims[ix->rank - 1];
    int64_t xs[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xs);
    int64_t tuples = kn_prod(ix->dims, 0, ix->rank - 1);
    int64_t per_batch = kn_prod(ix->dims, b, ix->rank - 1); /* tuples per batch entry */
    int64_t batch_size = kn_prod(x->dims, b, x->rank);      /* data elements per batch entry */
    int64_t slice = kn_prod(x->dims, b + k, x->rank);
    size_t es = kn_elem_size(x->dtype);
    const int64_t *idx = in[1]->data;
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = (t / per_batch) * batch_size;
        for (int j = 0; j < k; j++) {
            int64_t d = x->dims[b + j], v = fix_index(idx[t * k + j], d);
            if (v < 0) return bad_index(cx, n, idx[t * k + j], d);
            off += v * xs[b + j];
        }
        if (slice)
            memcpy((char *)out[0]->data + (size_t)(t * slice) * es,
                   (const char *)in[0]->data + (size_t)off * es, (size_t)slice * es);
    }
    return KN_OK;
}

/* ---- Scatter (deprecated), ScatterElements, ScatterND ---- */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static kn_status reduction(kn_ctx *cx, const kn_node *n, int *red) {
    const char *s = kn_attr_str(cx, n, "reduction", "none");
    if (kn_failed(cx)) return cx->status;
    if (!strcmp(s, "none"))
        *red = RED_NONE;
    else if (!strcmp(s, "add"))
        *red = RED_ADD;
    else if (!strcmp(s, "mul"))
        *red = RED_MUL;
    else if (!strcmp(s, "max"))
        *red = RED_MAX;
    else if (!strcmp(s, "min"))
        *red = RED_MIN;
    else
        return kn_diag(cx, n, KN_EINVAL, "unknown reduction '%s'", s);
    return KN_OK;
}

/* dst[di] = dst[di] <red> src[si], in double for floats and exact for integers. */
static void reduce_into(void *dst, int64_t di, const void *src, int64_t si, kn_dtype t, int red) {
    const kn_dtype_info *info = kn_dtype_get(t);
    if (red == RED_NONE || t == KN_STRING) {
        kn_copy_elem(dst, di, src, si, info->size);
    } else if (info->is_float) {
        double a = kn_load_f64(dst, t, (size_t)di), b = kn_load_f64(src, t, (size_t)si);
        double r = red == RED_ADD   ? a + b
                   : red == RED_MUL ? a * b
                   : red == RED_MAX ? (a > b ? a : b)
                                    : (a < b ? a : b);
        kn_store_f64(dst, t, (size_t)di, r);
    } else if (red == RED_ADD || red == RED_MUL) {
        /* Wrapping arithmetic modulo 2^64, then truncation to t: exact for every width. */
        uint64_t a = kn_load_u64(dst, t, (size_t)di), b = kn_load_u64(src, t, (size_t)si);
        kn_store_u64(dst, t, (size_t)di, red == RED_ADD ? a + b : a * b);
    } else if (info->is_signed) {
        int64_t a = kn_load_i64(dst, t, (size_t)di), b = kn_load_i64(src, t, (size_t)si);
        kn_store_i64(dst, t, (size_t)di, (red == RED_MAX) == (a > b) ? a : b);
    } else {
        uint64_t a = kn_load_u64(dst, t, (size_t)di), b = kn_load_u64(src, t, (size_t)si);
        kn_store_u64(dst, t, (size_t)di, (red == RED_MAX) == (a > b) ? a : b);
    }
}

static kn_status infer_scatterelements(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                       kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st || (st = check_indices(cx, n, in, 1)) || (st = kn_need_tensor(cx, n, in, 2))) return st;
    const kn_type *x = &in[0]->type, *ix = &in[1]->type, *u = &in[2]->type;
    int red;
    if ((st = reduction(cx, n, &red))) return st;
    int64_t axis = kn_attr_int(cx, n, "axis", 0);
    if (kn_failed(cx)) return cx->status;
    if (u->dtype != x->dtype)
        return kn_diag(cx, n, KN_EINVAL, "updates are %s, data %s", kn_dtype_name(u->dtype),
                       kn_dtype_name(x->dtype));
    out[0] = *x;
    if (x->rank < 0) return KN_OK;
    int a;
    if ((st = kn_axis(cx, n, axis, x->rank, 0, &a))) return st;
    if (ix->rank >= 0 && ix->rank != x->rank)
        return kn_diag(cx, n, KN_EINVAL, "indices have rank %d, data rank %d", ix->rank, x->rank);
    if (ix->rank >= 0 && u->rank >= 0) {
        if (!kn_type_static(ix) || !kn_type_static(u)) return KN_OK;
        for (int d = 0; d < ix->rank; d++)
            if (ix->dims[d] != u->dims[d])
                return kn_diag(cx, n, KN_EINVAL, "indices and updates differ in shape");
    }
    return KN_OK;
}

static kn_status eval_scatterelements(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                      kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_scatterelements);
    if (st) return st;
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_type *x = &in[0]->type, *ix = &in[1]->type;
    int a, red;
    kn_axis(cx, n, kn_attr_int(cx, n, "axis", 0), x->rank, 0, &a);
    if ((st = reduction(cx, n, &red))) return st;
    kn_copy_all(out[0], in[0]);
    int64_t xs[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xs);
    int64_t cnt = kn_tensor_numel(in[1]);
    for (int64_t i = 0; i < cnt; i++) {
        int64_t raw = kn_load_i64(in[1]->data, ix->dtype, (size_t)i);
        int64_t idx = fix_index(raw, x->dims[a]);
        if (idx < 0) return bad_index(cx, n, raw, x->dims[a]);
        int64_t off = offset_with(i, x->rank, ix->dims, xs, a, idx);
        reduce_into(out[0]->data, off, in[2]->data, i, x->dtype, red);
    }
    return KN_OK;
}

static kn_status infer_scatternd(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st || (st = kn_check_dtype(cx, n, in[1], 1, KN_DT(I64))) ||
        (st = kn_need_tensor(cx, n, in, 2)))
        return st;
    const kn_type *x = &in[0]->type, *ix = &in[1]->type, *u = &in[2]->type;
    int red;
    if ((st = reduction(cx, n, &red))) return st;
    if (u->dtype != x->dtype)
        return kn_diag(cx, n, KN_EINVAL, "updates are %s, data %s", kn_dtype_name(u->dtype),
                       kn_dtype_name(x->dtype));
    out[0] = *x;
    if (!kn_type_static(x) || !kn_type_static(ix) || !kn_type_static(u)) return KN_OK;
    if (ix->rank < 1) return kn_diag(cx, n, KN_EINVAL, "indices must have rank >= 1");
    int64_t k = ix->dims[ix->rank - 1];
    if (k < 1 || k > x->rank)
        return kn_diag(cx, n, KN_EINVAL, "index tuples of length %lld for data of rank %d",
                       (long long)k, x->rank);
    /* updates: indices.shape[:-1] + data.shape[k:] */
    int ur = ix->rank - 1 + x->rank - (int)k;
    bool ok = u->rank == ur;
    for (int d = 0; ok && d < ix->rank - 1; d++) ok = u->dims[d] == ix->dims[d];
    for (int d = (int)k; ok && d < x->rank; d++) ok = u->dims[ix->rank - 1 + d - k] == x->dims[d];
    if (!ok) return kn_diag(cx, n, KN_EINVAL, "updates have the wrong shape");
    return KN_OK;
}

static kn_status eval_scatternd(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_scatternd);
    if (st) return st;
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_type *x = &in[0]->type, *ix = &in[1]->type;
    int red;
    if ((st = reduction(cx, n, &red))) return st;
    kn_copy_all(out[0], in[0]);
    int k = (int)ix->dims[ix->rank - 1];
    int64_t xs[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xs);
    int64_t tuples = kn_prod(ix->dims, 0, ix->rank - 1), slice = kn_prod(x->dims, k, x->rank);
    const int64_t *idx = in[1]->data;
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = 0;
        for (int j = 0; j < k; j++) {
            int64_t v = fix_index(idx[t * k + j], x->dims[j]);
            if (v < 0) return bad_index(cx, n, idx[t * k + j], x->dims[j]);
            off += v * xs[j];
        }
        for (int64_t e = 0; e < slice; e++)
            reduce_into(out[0]->data, off + e, in[2]->data, t * slice + e, x->dtype, red);
    }
    return KN_OK;
}

/* ---- Compress, NonZero ---- */

/* Number of true entries among the first `limit` of known bool tensor c. */
static int64_t count_true(const kn_tensor *c, int64_t limit) {
    int64_t len = kn_tensor_numel(c), cnt = 0;
    if (limit < len) len = limit;
    for (int64_t i = 0; i < len; i++) cnt += ((const uint8_t *)c->data)[i] != 0;
    return cnt;
}

static kn_status infer_compress(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st || (st = kn_check_dtype(cx, n, in[1], 1, KN_DT(BOOL)))) return st;
    const kn_type *x = &in[0]->type;
    const kn_attr *ax = kn_node_attr(n, "axis");
    int64_t axis = kn_attr_int(cx, n, "axis", 0);
    if (kn_failed(cx)) return cx->status;
    if (in[1]->type.rank > 1)
        return kn_diag(cx, n, KN_EINVAL, "condition must be 1-D, has rank %d", in[1]->type.rank);
    if (!ax) {
        int64_t len = kn_data_known(in[1])
                          ? count_true(in[1], kn_type_numel(x) < 0 ? INT64_MAX : kn_type_numel(x))
                          : -1;
        if (len >= 0 && kn_type_numel(x) < 0) len = -1;
        out[0] = kn_type_make(x->dtype, 1, &len);
        return KN_OK;
    }
    out[0] = *x;
    if (x->rank < 0) return KN_OK;
    int a;
    if ((st = kn_axis(cx, n, axis, x->rank, 0, &a))) return st;
    out[0].sym[a] = NULL;
    if (!kn_data_known(in[1]) || x->dims[a] < 0)
        out[0].dims[a] = -1;
    else
        out[0].dims[a] = count_true(in[1], x->dims[a]);
    return KN_OK;
}

static kn_status eval_compress(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                               kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_compress);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    const uint8_t *c = in[1]->data;
    int64_t clen = kn_tensor_numel(in[1]);
    size_t es = kn_elem_size(x->dtype);
    if (!kn_node_attr(n, "axis")) {
        int64_t cnt = kn_tensor_numel(in[0]), j = 0;
        for (int64_t i = 0; i < cnt && i < clen; i++)
            if (c[i]) kn_copy_elem(out[0]->data, j++, in[0]->data, i, es);
        return KN_OK;
    }
    int a;
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_axis(cx, n, kn_attr_int(cx, n, "axis", 0), x->rank, 0, &a);
    int64_t outer = kn_prod(x->dims, 0, a), inner = kn_prod(x->dims, a + 1, x->rank),
            d = x->dims[a];
    size_t blk = (size_t)inner * es;
    char *dst = out[0]->data;
    for (int64_t k = 0; k < outer; k++) {
        for (int64_t i = 0; i < d && i < clen; i++) {
            if (!c[i] || !blk) continue;
            memcpy(dst, (const char *)in[0]->data + (size_t)(k * d + i) * blk, blk);
            dst += blk;
        }
    }
    return KN_OK;
}

static bool is_nonzero(const kn_tensor *t, int64_t i) {
    if (t->type.dtype == KN_STRING) return ((char *const *)t->data)[i][0] != 0;
    if (kn_dtype_get(t->type.dtype)->is_float) return kn_load_f64(t->data, t->type.dtype, i) != 0;
    return kn_load_u64(t->data, t->type.dtype, (size_t)i) != 0;
}

static kn_status infer_nonzero(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    int64_t dims[2] = {x->rank, -1};
    if (kn_data_known(in[0])) {
        int64_t cnt = kn_tensor_numel(in[0]);
        dims[1] = 0;
        for (int64_t i = 0; i < cnt; i++) dims[1] += is_nonzero(in[0], i);
    }
    out[0] = kn_type_make(KN_I64, 2, dims);
    return KN_OK;
}

static kn_status eval_nonzero(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_nonzero);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    int64_t cnt = kn_tensor_numel(in[0]), nnz = out[0]->type.dims[1], j = 0;
    int64_t *o = out[0]->data;
    for (int64_t i = 0; i < cnt; i++) {
        if (!is_nonzero(in[0], i)) continue;
        int64_t rem = i;
        for (int d = x->rank - 1; d >= 0; d--) {
            o[d * nnz + j] = rem % x->dims[d];
            rem /= x->dims[d];
        }
        j++;
    }
    return KN_OK;
}

/* ---- OneHot ---- */

static kn_status onehot_params(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, int *axis,
                               int64_t *depth) {
    const kn_type *x = &in[0]->type;
    int64_t ax = kn_attr_int(cx, n, "axis", -1);
    if (kn_failed(cx)) return cx->status;
    *depth = -1;
    *axis = -1;
    if (x->rank >= 0) {
        kn_status st = kn_axis(cx, n, ax, x->rank, 1, axis);
        if (st) return st;
    }
    if (kn_data_known(in[1])) {
        if (kn_tensor_numel(in[1]) != 1)
            return kn_diag(cx, n, KN_EINVAL, "depth must hold one value");
        double d = kn_load_f64(in[1]->data, in[1]->type.dtype, 0);
        if (!(d >= 1) || d > 1e15) return kn_diag(cx, n, KN_EINVAL, "depth %g is invalid", d);
        *depth = (int64_t)d;
    }
    return KN_OK;
}

static kn_status infer_onehot(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st || (st = kn_need_tensor(cx, n, in, 1)) || (st = kn_need_tensor(cx, n, in, 2))) return st;
    const kn_type *x = &in[0]->type;
    int a;
    int64_t depth;
    if ((st = onehot_params(cx, n, in, &a, &depth))) return st;
    if (in[2]->type.rank >= 0 && kn_type_numel(&in[2]->type) >= 0 &&
        kn_type_numel(&in[2]->type) != 2)
        return kn_diag(cx, n, KN_EINVAL, "values must hold [off, on]");
    out[0] = kn_type_unknown(in[2]->type.dtype);
    if (x->rank < 0) return KN_OK;
    if (x->rank + 1 > KN_MAX_RANK)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "output rank %d is too large", x->rank + 1);
    out[0].kind = KN_KIND_TENSOR;
    out[0].rank = x->rank + 1;
    for (int d = 0, k = 0; d <= x->rank; d++) out[0].dims[d] = d == a ? depth : x->dims[k++];
    return KN_OK;
}

static kn_status eval_onehot(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_onehot);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    int a;
    int64_t depth;
    if ((st = onehot_params(kn_exec_ctx(ex), n, in, &a, &depth))) return st;
    int64_t outer = kn_prod(x->dims, 0, a), inner = kn_prod(x->dims, a, x->rank);
    size_t es = kn_elem_size(out[0]->type.dtype);
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t j = 0; j < depth; j++) {
            for (int64_t i = 0; i < inner; i++) {
                int64_t src = o * inner + i;
                double v = kn_load_f64(in[0]->data, x->dtype, (size_t)src);
                int64_t idx = (int64_t)v;
                if (idx < 0) idx += depth;
                kn_copy_elem(out[0]->data, (o * depth + j) * inner + i, in[2]->data, idx == j, es);
            }
        }
    }
    return KN_OK;
}

/* ---- ReverseSequence ---- */

static kn_status infer_reversesequence(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                       kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st || (st = kn_check_dtype(cx, n, in[1], 1, KN_DT(I64)))) return st;
    int64_t ta = kn_attr_int(cx, n, "time_axis", 0), ba = kn_attr_int(cx, n, "batch_axis", 1);
    if (kn_failed(cx)) return cx->status;
    if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
        return kn_diag(cx, n, KN_EINVAL, "time_axis and batch_axis must be 0 and 1");
    if (in[0]->type.rank >= 0 && in[0]->type.rank < 2)
        return kn_diag(cx, n, KN_EINVAL, "input must have rank >= 2, has %d", in[0]->type.rank);
    out[0] = in[0]->type;
    return KN_OK;
}

static kn_status eval_reversesequence(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                      kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_reversesequence);
    if (st) return st;
    kn_ctx *cx = kn_exec_ctx(ex);
    int ta = (int)kn_attr_int(cx, n, "time_axis", 0), ba = 1 - ta;
    const kn_type *x = &in[0]->type;
    int64_t xs[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xs);
    int64_t T = x->dims[ta], B = x->dims[ba], inner = kn_prod(x->dims, 2, x->rank);
    if (kn_tensor_numel(in[1]) != B)
        return kn_diag(cx, n, KN_EINVAL, "sequence_lens has %lld entries for batch %lld",
                       (long long)kn_tensor_numel(in[1]), (long long)B);
    size_t es = kn_elem_size(x->dtype), blk = (size_t)inner * es;
    for (int64_t b = 0; b < B; b++) {
        int64_t len = ((const int64_t *)in[1]->data)[b];
        if (len < 0 || len > T)
            return kn_diag(cx, n, KN_EINVAL, "sequence length %lld is out of range",
                           (long long)len);
        for (int64_t t = 0; t < T; t++) {
            int64_t src = t < len ? len - 1 - t : t;
            if (!blk) continue;
            size_t dst_off = (size_t)(t * xs[ta] + b * xs[ba]) * es;
            size_t src_off = (size_t)(src * xs[ta] + b * xs[ba]) * es;
            memcpy((char *)out[0]->data + dst_off, (const char *)in[0]->data + src_off, blk);
        }
    }
    return KN_OK;
}

/* ---- Unique ---- */

/* Three-way comparison of elements i and j of buffer p of type t. */
static int cmp_elem(const void *p, kn_dtype t, int64_t i, int64_t j) {
    const kn_dtype_info *info = kn_dtype_get(t);
    if (t == KN_STRING) {
        int c = strcmp(((char *const *)p)[i], ((char *const *)p)[j]);
        return (c > 0) - (c < 0);
    }
    if (info->is_float) {
        double a = kn_load_f64(p, t, (size_t)i), b = kn_load_f64(p, t, (size_t)j);
        if (a != a || b != b) return (a != a) - (b != b); /* NaNs equal, after numbers */
        return (a > b) - (a < b);
    }
    if (info->is_signed) {
        int64_t a = kn_load_i64(p, t, (size_t)i), b = kn_load_i64(p, t, (size_t)j);
        return (a > b) - (a < b);
    }
    uint64_t a = kn_load_u64(p, t, (size_t)i), b = kn_load_u64(p, t, (size_t)j);
    return (a > b) - (a < b);
}

/* x viewed as `outer` x `m` x `inner`: the m items Unique compares are the slices
 * along the axis, or the single elements of the flattened tensor without one. */
typedef struct unique_view {
    bool has_axis;
    int axis;
    int64_t outer, m, inner;
} unique_view;

static kn_status unique_setup(kn_ctx *cx, const kn_node *n, const kn_type *x, unique_view *v) {
    const kn_attr *ax = kn_node_attr(n, "axis");
    int64_t axis = kn_attr_int(cx, n, "axis", 0);
    kn_attr_int(cx, n, "sorted", 1);
    if (kn_failed(cx)) return cx->status;
    v->has_axis = ax != NULL;
    v->axis = 0;
    v->outer = v->inner = 1;
    v->m = -1;
    if (x->rank < 0) return KN_OK;
    if (!v->has_axis) {
        v->m = kn_type_numel(x);
        return KN_OK;
    }
    kn_status st = kn_axis(cx, n, axis, x->rank, 0, &v->axis);
    if (st) return st;
    v->outer = kn_prod_or_unknown(x->dims, 0, v->axis);
    v->m = x->dims[v->axis];
    v->inner = kn_prod_or_unknown(x->dims, v->axis + 1, x->rank);
    if (v->outer < 0 || v->inner < 0) v->m = -1;
    return KN_OK;
}

/* Lexicographic comparison of items a and b (numpy orders subarrays this way). */
static int cmp_items(const kn_tensor *x, const unique_view *v, int64_t a, int64_t b) {
    for (int64_t o = 0; o < v->outer; o++)
        for (int64_t k = 0; k < v->inner; k++) {
            int c = cmp_elem(x->data, x->type.dtype, (o * v->m + a) * v->inner + k,
                             (o * v->m + b) * v->inner + k);
            if (c) return c;
        }
    return 0;
}

static kn_status infer_unique(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_status st = kn_need_tensor(cx, n, in, 0);
    if (st) return st;
    const kn_type *x = &in[0]->type;
    unique_view v;
    if ((st = unique_setup(cx, n, x, &v))) return st;
    int64_t u = -1;
    if (kn_data_known(in[0])) {
        u = 0;
        for (int64_t s = 0; s < v.m; s++) {
            int64_t t = 0;
            while (t < s && cmp_items(in[0], &v, t, s)) t++;
            u += t == s;
        }
    }
    if (!v.has_axis) {
        out[0] = kn_type_make(x->dtype, 1, &u);
    } else {
        out[0] = *x;
        if (x->rank >= 0) {
            out[0].dims[v.axis] = u;
            out[0].sym[v.axis] = NULL;
        }
    }
    for (int j = 1; j < n->nout; j++) out[j] = kn_type_make(KN_I64, 1, j == 2 ? &v.m : &u);
    return KN_OK;
}

static kn_status eval_unique(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_status st = kn_alloc_outputs(ex, n, in, out, infer_unique);
    if (st) return st;
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_arena *ar = kn_exec_arena(ex);
    const kn_tensor *x = in[0];
    unique_view v;
    if ((st = unique_setup(cx, n, &x->type, &v))) return st;
    bool sorted = kn_attr_int(cx, n, "sorted", 1) != 0;
    size_t m = (size_t)(v.m > 0 ? v.m : 1);
    int64_t *first = kn_arena_array(ar, m, sizeof *first); /* unique id -> first item */
    int64_t *count = kn_arena_array(ar, m, sizeof *count);
    int64_t *id = kn_arena_array(ar, m, sizeof *id);       /* item -> unique id */
    int64_t *order = kn_arena_array(ar, m, sizeof *order); /* output slot -> unique id */
    int64_t *slot = kn_arena_array(ar, m, sizeof *slot);   /* unique id -> output slot */
    KN_ASSERT(first && count && id && order && slot);
    int64_t u = 0;
    for (int64_t s = 0; s < v.m; s++) {
        int64_t k = 0;
        while (k < u && cmp_items(x, &v, first[k], s)) k++;
        if (k == u) first[u++] = s;
        id[s] = k;
        count[k]++;
    }
    /* Insertion sort of the unique ids by value (stable; ids are in first-seen order). */
    for (int64_t k = 0; k < u; k++) {
        int64_t p = k;
        while (sorted && p > 0 && cmp_items(x, &v, first[order[p - 1]], first[k]) > 0) {
            order[p] = order[p - 1];
            p--;
        }
        order[p] = k;
    }
    for (int64_t p = 0; p < u; p++) slot[order[p]] = p;
    size_t es = kn_elem_size(x->type.dtype);
    for (int64_t o = 0; o < v.outer; o++)
        for (int64_t p = 0; p < u; p++)
            for (int64_t k = 0; k < v.inner; k++)
                kn_copy_elem(out[0]->data, (o * u + p) * v.inner + k, x->data,
                             (o * v.m + first[order[p]]) * v.inner + k, es);
    for (int64_t p = 0; p < u; p++) {
        if (n->nout > 1) ((int64_t *)out[1]->data)[p] = first[order[p]];
        if (n->nout > 3) ((int64_t *)out[3]->data)[p] = count[order[p]];
    }
    if (n->nout > 2)
        for (int64_t s = 0; s < v.m; s++) ((int64_t *)out[2]->data)[s] = slot[id[s]];
    return KN_OK;
}

const kn_opimpl kn_ops_index[] = {
    {KN_OP_GATHER, infer_gather, eval_gather},
    {KN_OP_GATHERELEMENTS, infer_gatherelements, eval_gatherelements},
    {KN_OP_GATHERND, infer_gathernd, eval_gathernd},
    {KN_OP_SCATTER, infer_scatterelements, eval_scatterelements},
    {KN_OP_SCATTERELEMENTS, infer_scatterelements, eval_scatterelements},
    {KN_OP_SCATTERND, infer_scatternd, eval_scatternd},
    {KN_OP_COMPRESS, infer_compress, eval_compress},
    {KN_OP_NONZERO, infer_nonzero, eval_nonzero},
    {KN_OP_ONEHOT, infer_onehot, eval_onehot},
    {KN_OP_REVERSESEQUENCE, infer_reversesequence, eval_reversesequence},
    {KN_OP_UNIQUE, infer_unique, eval_unique},
    {KN_OP_COUNT, 0, 0},
};
