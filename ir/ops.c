/* The descriptor table built from ir/ops.def and the group files, plus the shared
 * helpers of op implementations (broadcasting, axes, conversions, optional inputs,
 * element copies, output allocation, the FLOP estimate). The table is
 * filled once, on first use (call_once: threads may load models concurrently);
 * registering an op twice is a broken invariant. */
#include "ir/ops.h"

#include <string.h>
#include <threads.h>

static kn_opdesc table[KN_OP_COUNT] = {
#define OP(id, dom, nm, minin, maxin, minout, maxout, fl)                                          \
    [KN_OP_##id] = {dom, nm, minin, maxin, minout, maxout, fl, NULL, NULL, NULL},
#include "ir/ops.def"
#undef OP
};
static once_flag table_once = ONCE_FLAG_INIT;

static void table_init(void) {
    static const kn_opimpl *groups[] = {
#define X(g) kn_ops_##g,
        KN_OP_GROUPS(X)
#undef X
    };
    static const kn_oplower *lowers[] = {
#define X(g) kn_lower_##g,
        KN_LOWER_GROUPS(X)
#undef X
    };
    for (size_t gi = 0; gi < sizeof lowers / sizeof *lowers; gi++) {
        for (const kn_oplower *p = lowers[gi]; p->op != KN_OP_COUNT; p++) {
            KN_ASSERT(p->op < KN_OP_COUNT && !table[p->op].lower);
            table[p->op].lower = p->lower;
        }
    }
    for (size_t gi = 0; gi < sizeof groups / sizeof *groups; gi++) {
        for (const kn_opimpl *p = groups[gi]; p->op != KN_OP_COUNT; p++) {
            KN_ASSERT(p->op < KN_OP_COUNT && !table[p->op].infer);
            table[p->op].infer = p->infer;
            table[p->op].eval = p->eval;
        }
    }
}

const kn_opdesc *kn_op_desc(kn_op op) {
    call_once(&table_once, table_init);
    KN_ASSERT(op < KN_OP_COUNT);
    return &table[op];
}

kn_op kn_op_lookup(const char *domain, const char *name) {
    call_once(&table_once, table_init);
    if (!domain || !strcmp(domain, "ai.onnx")) domain = "";
    for (int i = 0; i < KN_OP_COUNT; i++)
        if (!strcmp(table[i].name, name) && !strcmp(table[i].domain, domain)) return (kn_op)i;
    return KN_OP_COUNT;
}

/* ---- helpers ---- */

kn_status kn_broadcast(kn_ctx *cx, const kn_node *nd, int n, const kn_type *const *in,
                       kn_type *out) {
    int rank = 0;
    for (int i = 0; i < n; i++) {
        if (!in[i]) continue;
        if (in[i]->rank < 0) {
            out->rank = -1;
            return KN_OK;
        }
        if (in[i]->rank > rank) rank = in[i]->rank;
    }
    out->kind = KN_KIND_TENSOR;
    out->rank = rank;
    for (int d = 0; d < rank; d++) {
        int64_t dim = 1;
        const char *sym = NULL;
        for (int i = 0; i < n; i++) {
            if (!in[i]) continue;
            int k = d - (rank - in[i]->rank);
            if (k < 0) continue;
            int64_t e = in[i]->dims[k];
            if (e == 1) continue;
            if (e < 0) {
                if (dim == 1) {
                    dim = -1;
                    sym = in[i]->sym[k];
                }
                continue;
            }
            if (dim == 1 || dim < 0)
                dim = e;
            else if (dim != e)
                return kn_diag(cx, nd, KN_EINVAL,
                               "input shapes cannot be broadcast: dim %d is %lld and %lld", d,
                               (long long)dim, (long long)e);
        }
        out->dims[d] = dim;
        out->sym[d] = dim < 0 ? sym : NULL;
    }
    return KN_OK;
}

void kn_strides(int rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        /* Saturates: a tensor whose extents overflow int64 has a 0 extent and no elements. */
        s = dims[i] > 0 && s > INT64_MAX / dims[i] ? INT64_MAX : s * dims[i];
    }
}

void kn_bcast_strides(const kn_type *in, int orank, const int64_t *odims, int64_t *strides) {
    int64_t own[KN_MAX_RANK];
    kn_strides(in->rank, in->dims, own);
    (void)odims;
    for (int d = 0; d < orank; d++) {
        int k = d - (orank - in->rank);
        strides[d] = (k < 0 || in->dims[k] == 1) ? 0 : own[k];
    }
}

bool kn_bcast_into(const kn_type *r, const kn_type *y) {
    if (!kn_type_static(r) || !kn_type_static(y) || r->rank > y->rank) return false;
    for (int i = 0; i < r->rank; i++) {
        int64_t d = r->dims[i], yd = y->dims[y->rank - r->rank + i];
        if (d != 1 && d != yd) return false;
    }
    return true;
}

int64_t kn_bcast_offset(int64_t i, int orank, const int64_t *odims, const int64_t *strides) {
    int64_t off = 0;
    for (int d = orank - 1; d >= 0; d--) {
        int64_t e = odims[d];
        if (e == 0) return 0;
        off += (i % e) * strides[d];
        i /= e;
    }
    return off;
}

kn_status kn_axis(kn_ctx *cx, const kn_node *n, int64_t axis, int rank, int extra, int *out) {
    int64_t r = rank + extra;
    if (axis < -r || axis >= r)
        return kn_diag(cx, n, KN_EINVAL, "axis %lld is out of range for rank %d", (long long)axis,
                       rank);
    *out = (int)(axis < 0 ? axis + r : axis);
    return KN_OK;
}

int64_t *kn_tensor_i64s(kn_arena *a, const kn_tensor *t) {
    int64_t n = kn_tensor_numel(t);
    int64_t *v = kn_arena_array(a, (size_t)(n > 0 ? n : 1), sizeof *v);
    KN_ASSERT(v && t->data);
    for (int64_t i = 0; i < n; i++) v[i] = kn_load_i64(t->data, t->type.dtype, (size_t)i);
    return v;
}

double *kn_tensor_f64s(kn_arena *a, const kn_tensor *t) {
    int64_t n = kn_tensor_numel(t);
    double *v = kn_arena_array(a, (size_t)(n > 0 ? n : 1), sizeof *v);
    KN_ASSERT(v && t->data);
    for (int64_t i = 0; i < n; i++) v[i] = kn_load_f64(t->data, t->type.dtype, (size_t)i);
    return v;
}

void kn_tensor_store_f64s(kn_tensor *t, const double *v) {
    int64_t n = kn_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) kn_store_f64(t->data, t->type.dtype, (size_t)i, v[i]);
}

void kn_tensor_store_i64s(kn_tensor *t, const int64_t *v) {
    int64_t n = kn_tensor_numel(t);
    for (int64_t i = 0; i < n; i++) kn_store_i64(t->data, t->type.dtype, (size_t)i, v[i]);
}

kn_status kn_infer_same(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    (void)cx;
    (void)n;
    out[0] = in[0]->type;
    return KN_OK;
}

static kn_status narrow_refused(kn_ctx *cx, const kn_node *n, const char *what, int i,
                                const char *name, kn_dtype t) {
    return kn_diag(cx, n, KN_EUNSUPPORTED,
                   "%s %d ('%s') has type %s; float8 and 4-bit tensors are supported in %s only",
                   what, i, name ? name : "", kn_dtype_name(t), KN_NARROW_OPS);
}

kn_status kn_op_infer(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    const kn_opdesc *d = kn_op_desc(n->op);
    bool gate = !(d->flags & OPF_NARROW);
    for (int k = 0; gate && k < n->nin; k++)
        if (in[k] && in[k]->type.kind == KN_KIND_TENSOR &&
            kn_dtype_get(in[k]->type.dtype)->is_narrow)
            return narrow_refused(cx, n, "input", k, n->in[k] ? n->in[k]->name : NULL,
                                  in[k]->type.dtype);
    if (d->infer(cx, n, in, out) || kn_failed(cx)) return cx->status ? cx->status : KN_EINVAL;
    for (int j = 0; gate && j < n->nout; j++)
        if (out[j].kind == KN_KIND_TENSOR && kn_dtype_get(out[j].dtype)->is_narrow)
            return narrow_refused(cx, n, "output", j, n->out[j] ? n->out[j]->name : NULL,
                                  out[j].dtype);
    return KN_OK;
}

kn_status kn_check_dtype(kn_ctx *cx, const kn_node *n, const kn_tensor *in, int i, unsigned mask) {
    if (!in) return kn_diag(cx, n, KN_EINVAL, "input %d is required", i);
    if (in->type.kind != KN_KIND_TENSOR)
        return kn_diag(cx, n, KN_EINVAL, "input %d must be a tensor", i);
    kn_dtype t = in->type.dtype;
    if (t <= 0 || t >= 32 || !(mask & (1u << t)))
        return kn_diag(cx, n, KN_EUNSUPPORTED, "input %d has unsupported type %s", i,
                       kn_dtype_name(t));
    return KN_OK;
}

kn_status kn_need_tensor(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, int i) {
    if (i >= n->nin || !in[i]) return kn_diag(cx, n, KN_EINVAL, "input %d is required", i);
    if (in[i]->type.kind != KN_KIND_TENSOR)
        return kn_diag(cx, n, KN_EINVAL, "input %d must be a tensor", i);
    return KN_OK;
}

kn_tensor *kn_opt_in(const kn_node *n, kn_tensor *const *in, int i) {
    return i < n->nin ? in[i] : NULL;
}

bool kn_data_known(const kn_tensor *t) {
    return t && t->type.kind == KN_KIND_TENSOR && t->data && kn_type_static(&t->type);
}

int64_t kn_prod(const int64_t *dims, int from, int to) {
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= dims[i];
    return p;
}

int64_t kn_prod_or_unknown(const int64_t *dims, int from, int to) {
    int64_t p = 1;
    for (int i = from; i < to; i++) {
        if (dims[i] < 0) return -1;
        p *= dims[i];
    }
    return p;
}

size_t kn_elem_size(kn_dtype t) {
    return kn_dtype_get(t)->size;
}

void kn_copy_elem(void *dst, int64_t di, const void *src, int64_t si, size_t es) {
    memcpy((char *)dst + (size_t)di * es, (const char *)src + (size_t)si * es, es);
}

void kn_copy_all(kn_tensor *dst, const kn_tensor *src) {
    size_t nb = kn_tensor_nbytes(src);
    if (nb) memcpy(dst->data, src->data, nb);
}

double kn_tensor_get_f64(const kn_tensor *t, int64_t i) {
    return kn_load_f64(t->data, t->type.dtype, (size_t)i);
}

void kn_tensor_set_f64(kn_tensor *t, int64_t i, double v) {
    kn_store_f64(t->data, t->type.dtype, (size_t)i, v);
}

bool kn_str_eq_nocase(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        char ca = *a >= 'A' && *a <= 'Z' ? (char)(*a - 'A' + 'a') : *a;
        char cb = *b >= 'A' && *b <= 'Z' ? (char)(*b - 'A' + 'a') : *b;
        if (ca != cb) return false;
    }
    return *a == *b;
}

/* Infer runs once more here on the inputs eval sees; it is pure, so its types match
 * the ones the interpreter computed before eval. */
kn_status kn_alloc_outputs(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out,
                           kn_infer_fn infer) {
    int missing = 0;
    for (int j = 0; j < n->nout; j++) missing |= !out[j];
    if (!missing) return KN_OK;
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type *t = kn_arena_array(kn_exec_arena(ex), (size_t)n->nout, sizeof *t);
    KN_ASSERT(t);
    memset(t, 0, (size_t)n->nout * sizeof *t);
    kn_status st = infer(cx, n, in, t);
    if (st) return st;
    for (int j = 0; j < n->nout; j++) {
        if (out[j]) continue;
        if (!kn_type_static(&t[j]))
            return kn_diag(cx, n, KN_EINTERNAL, "output %d has no static type at run time", j);
        out[j] = kn_exec_tensor(ex, n, t[j].dtype, t[j].rank, t[j].dims);
        if (!out[j]) return cx->status ? cx->status : KN_ELIMIT;
    }
    return KN_OK;
}

kn_tensor *kn_ensure_output(kn_exec *ex, const kn_node *n, kn_tensor **out, int j,
                            const kn_type *t) {
    if (!out[j]) out[j] = kn_exec_tensor(ex, n, t->dtype, t->rank, t->dims);
    return out[j];
}

/* The estimate kiln inspect and kiln bench report (see ir/ops.h). */
int64_t kn_node_flops(const kn_node *n) {
    const kn_value *y = n->out[0];
    if (!y) return 0;
    int64_t out = kn_type_numel(&y->type);
    if (out < 0) return 0;
    /* where the weights and the bias are among the inputs (the integer forms have zero
     * points, not a bias, after the weights; QLinear* have scales and zero points first) */
    int wi = 1, bi = 2;
    if (n->op == KN_OP_QLINEARCONV) wi = 3, bi = 8;
    if (n->op == KN_OP_QLINEARMATMUL) wi = 3, bi = -1;
    if (n->op == KN_OP_MATMUL || n->op == KN_OP_MATMULINTEGER || n->op == KN_OP_CONVINTEGER)
        bi = -1;
    const kn_value *w = n->nin > wi ? n->in[wi] : NULL;
    int64_t bias = bi >= 0 && n->nin > bi && n->in[bi] ? out : 0; /* one add per output */
    switch (n->op) {
    case KN_OP_CONV:
    case KN_OP_QLINEARCONV:
    case KN_OP_CONVINTEGER:
    case KN_OP_CONVTRANSPOSE: {
        int64_t wn = w ? kn_type_numel(&w->type) : -1;
        int64_t cout = w && w->type.rank > 0 ? w->type.dims[0] : 0;
        if (wn < 0 || cout <= 0) return 0;
        if (n->op == KN_OP_CONVINTEGER) bias = 0; /* its third input is a zero point */
        if (n->op == KN_OP_CONVTRANSPOSE) {
            const kn_value *x = n->in[0];
            int64_t xn = kn_type_numel(&x->type);
            return xn < 0 ? 0 : 2 * xn * (wn / cout) + bias;
        }
        return 2 * out * (wn / cout) + bias;
    }
    case KN_OP_MATMUL:
    case KN_OP_QLINEARMATMUL:
    case KN_OP_MATMULINTEGER:
    case KN_OP_GEMM: {
        const kn_value *a = n->in[0];
        if (a->type.rank < 1) return 0;
        int64_t k = a->type.dims[a->type.rank - 1];
        if (n->op == KN_OP_GEMM && kn_attr_int(&(kn_ctx){0}, n, "transA", 0) && a->type.rank == 2)
            k = a->type.dims[0];
        return k < 0 ? 0 : 2 * out * k + (n->op == KN_OP_GEMM ? bias : 0);
    }
    default: return kn_op_desc(n->op)->flags & OPF_ELEMWISE ? out : 0;
    }
}
