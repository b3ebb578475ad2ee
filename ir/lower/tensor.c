/* Lowerings of data-movement operators to the kernel IR (see ir/kir.h): the shape
 * ops of ir/ops/tensor.c (Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Concat,
 * Split, Slice, Pad, Tile, Expand, DepthToSpace, SpaceToDepth, EyeLike, Trilu,
 * ConstantOfShape, Range, Constant) and the indexing ops of ir/ops/index.c (Gather,
 * GatherElements, GatherND, Scatter, ScatterElements, ScatterND, OneHot,
 * ReverseSequence), with the same attribute handling and opset forms.
 *
 * Every output shape is static here, so most parameters come from the buffers'
 * dims (Split's sizes, Tile's repeats, Expand's shape, OneHot's depth); the rest
 * (Slice's starts, Pad's pads) must be constant inputs, read with kl_const. Loops of
 * extent 1 are left out, so a Gather on axis 0 is two loops, not three. Elements
 * are moved in their own dtype: a contiguous run becomes one KS_COPY, a single
 * element a load and a store.
 *
 * Index values read at run time (Gather*, Scatter*, ReverseSequence lengths) are
 * normalised (negative counts from the end) and then made safe, since generated
 * code cannot report the interpreter's "index out of range" error: gathers clamp
 * the index into [0, extent), scatters skip the update, sequence lengths clamp
 * into [0, T]. In-range inputs give exactly the interpreter's results. */
#include "ir/kir.h"

#include <string.h>

/* ---- helpers ---- */

/* Opens a loop over [0, ext) and returns its index, or returns the constant 0 for
 * ext == 1 without a loop; *open counts the loops opened. */
static kn_kx *loop(kn_lower *L, int64_t ext, int *open) {
    if (ext == 1) return kx_int(L, 0);
    (*open)++;
    return kx_var(L, kl_for(L, ext));
}

/* Loops over dims[0..rank); idx[d] receives each index. Returns the loops opened. */
static int loops(kn_lower *L, int rank, const int64_t *dims, kn_kx **idx) {
    int open = 0;
    for (int d = 0; d < rank; d++) idx[d] = loop(L, dims[d], &open);
    return open;
}

/* acc + x * c, folded as it is built. */
static kn_kx *madd(kn_lower *L, kn_kx *acc, kn_kx *x, int64_t c) {
    return kx_bin(L, KX_ADD, acc, kx_bin(L, KX_MUL, x, kx_int(L, c)));
}

/* sum_d idx[d] * strides[d]. */
static kn_kx *dot(kn_lower *L, int rank, kn_kx *const *idx, const int64_t *strides) {
    kn_kx *off = kx_int(L, 0);
    for (int d = 0; d < rank; d++) off = madd(L, off, idx[d], strides[d]);
    return off;
}

static kn_kx *kmin(kn_lower *L, kn_kx *a, int64_t b) {
    return kx_bin(L, KX_MIN, a, kx_int(L, b));
}

static kn_kx *kmax(kn_lower *L, kn_kx *a, int64_t b) {
    return kx_bin(L, KX_MAX, a, kx_int(L, b));
}

static kn_kx *land(kn_lower *L, kn_kx *a, kn_kx *b) {
    return a ? kx_bin(L, KX_LAND, a, b) : b;
}

/* 0 <= i < d */
static kn_kx *in_range(kn_lower *L, kn_kx *i, int64_t d) {
    return kx_bin(L, KX_LAND, kx_bin(L, KX_GE, i, kx_int(L, 0)), kx_bin(L, KX_LT, i, kx_int(L, d)));
}

/* Moves count contiguous elements: a load and store for one, else a copy. */
static void move(kn_lower *L, kn_kbuf *dst, kn_kx *di, kn_kbuf *src, kn_kx *si, int64_t count) {
    if (count == 1)
        kl_store(L, dst, di, kx_load(L, src, si));
    else if (count > 1)
        kl_copy(L, dst, di, src, si, kx_int(L, count));
}

/* Stores 0 into every element of b. */
static void fill_zero(kn_lower *L, kn_kbuf *b) {
    int open = 0;
    kn_kx *i = loop(L, b->numel, &open);
    kl_store(L, b, i, kx_const(L, b->dtype, 0));
    kl_end_n(L, open);
}

/* A run-time index value normalised against extent d (negative counts from the
 * end), in a local: the result may still be out of range. */
static kn_kx *norm_index(kn_lower *L, kn_kx *raw, int64_t d) {
    kn_kx *r = kx_var(L, kl_decl(L, KN_I64, kx_cast(L, KN_I64, raw)));
    kn_kx *neg = kx_bin(L, KX_LT, r, kx_int(L, 0));
    return kx_var(L, kl_decl(L, KN_I64, kx_select(L, neg, kx_bin(L, KX_ADD, r, kx_int(L, d)), r)));
}

/* The index a gather reads, normalised and clamped into [0, d) (d > 0). The
 * interpreter rejects an out-of-range index; generated code cannot report errors,
 * so it reads the nearest valid element instead of out of bounds. */
static kn_kx *gather_index(kn_lower *L, kn_kx *raw, int64_t d) {
    kn_kx *r = kx_var(L, kl_decl(L, KN_I64, kx_cast(L, KN_I64, raw)));
    kn_kx *neg = kx_bin(L, KX_LT, r, kx_int(L, 0));
    kn_kx *i = kx_select(L, neg, kx_bin(L, KX_ADD, r, kx_int(L, d)), r);
    return kx_var(L, kl_decl(L, KN_I64, kmax(L, kmin(L, i, d - 1), 0)));
}

/* Integer input i as a constant list into v[0..cap); *cnt = -1 when it is omitted. */
static kn_status const_ints(kn_lower *L, const kn_node *n, int i, const char *what, int64_t *v,
                            int cap, int *cnt) {
    *cnt = -1;
    if (i >= n->nin || !n->in[i]) return KN_OK;
    const kn_tensor *t = kl_const(L, n, i);
    if (!t)
        return kn_diag(kl_ctx(L), n, KN_EUNSUPPORTED, "needs a constant %s input (%s)", what,
                       kn_hint_text(kl_ctx(L), KN_HINT_BIND));
    int64_t k = kn_tensor_numel(t);
    if (k > cap || !kn_dtype_get(t->type.dtype)->is_int)
        return kn_diag(kl_ctx(L), n, KN_EINVAL, "bad %s input", what);
    for (int64_t j = 0; j < k; j++) v[j] = kn_load_i64(t->data, t->type.dtype, (size_t)j);
    *cnt = (int)k;
    return KN_OK;
}

/* An integer list given as attribute `attr` (opset < input_opset) or as constant
 * input `idx`, as in the interpreter; *cnt = -1 when absent. */
static kn_status ints_from(kn_lower *L, const kn_node *n, const char *attr, int idx,
                           int input_opset, int64_t *v, int cap, int *cnt) {
    if (n->opset >= input_opset) return const_ints(L, n, idx, attr, v, cap, cnt);
    kn_ctx *cx = kl_ctx(L);
    const int64_t *a;
    int k = kn_attr_ints(cx, n, attr, &a);
    if (kn_failed(cx)) return cx->status;
    if (k > cap) return kn_diag(cx, n, KN_EINVAL, "attribute %s has too many values", attr);
    for (int j = 0; j < k; j++) v[j] = a[j];
    *cnt = k;
    return KN_OK;
}

/* Normalised attribute axis (default def) for rank r (r + 1 allowed when extra). */
static kn_status axis_attr(kn_lower *L, const kn_node *n, int64_t def, int r, int extra, int *a) {
    kn_ctx *cx = kl_ctx(L);
    int64_t axis = kn_attr_int(cx, n, "axis", def);
    if (kn_failed(cx)) return cx->status;
    return kn_axis(cx, n, axis, r, extra, a);
}

/* ---- Reshape, Flatten, Squeeze, Unsqueeze: the same elements in the same order ---- */

static kn_status lower_copy(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    (void)n;
    move(L, out[0], kx_int(L, 0), in[0], kx_int(L, 0), out[0]->numel);
    return KN_OK;
}

/* ---- Transpose, Expand ---- */

/* In blocks of `block` output columns, the input's contiguous axis a inside them: the
 * block's input rows are read whole while their lines are in L1 (one column of 128 rows
 * 1 KB apart, BERT's K transposed, maps to 4 of L1's 64 sets: every load missed L1, 34 us
 * for 128 KB on Zen 4). Blocks of 1, or a transpose they do not suit (no output axis reads
 * the input's contiguous one, narrow or string elements, a block that does not divide the
 * last axis into two or more): the plain nest. The kernel's record gets the block built
 * (1: the plain nest where blocks would suit), or 0 where they do not suit. */
static kn_status lower_transpose(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                 kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    int r = in[0]->rank;
    const int64_t *perm;
    int np = kn_attr_ints(cx, n, "perm", &perm);
    if (kn_failed(cx)) return cx->status;
    int64_t xs[KN_MAX_RANK], st[KN_MAX_RANK], os[KN_MAX_RANK];
    kn_strides(r, in[0]->dims, xs);
    kn_strides(r, out[0]->dims, os);
    for (int d = 0; d < r; d++) st[d] = xs[np < 0 ? r - 1 - d : perm[d]];
    kn_kx *v[KN_MAX_RANK];
    const int64_t *od = out[0]->dims;
    int a = -1; /* the output axis that reads the input's contiguous one */
    for (int d = 0; d < r - 1; d++)
        if (st[d] == 1 && od[d] > 1) a = d;
    const kn_dtype_info *ti = kn_dtype_get(in[0]->dtype);
    bool suits = a >= 0 && od[r - 1] >= 4 && !ti->is_narrow && in[0]->dtype != KN_STRING;
    const kn_sched *want = kl_wanted_sched(L);
    int64_t block = want    ? want->tblock
                    : suits ? kn_tblock_default(st[r - 1] * (int64_t)ti->size, od[r - 1])
                            : 1;
    bool blocked = suits && block > 1 && od[r - 1] > block && od[r - 1] % block == 0;
    kn_sched *rec = kl_sched_record(L);
    if (rec) rec->tblock = blocked ? (int)block : suits ? 1 : 0;
    if (blocked) {
        int open = 0;
        for (int d = 0; d < r - 1; d++)
            if (d != a) v[d] = loop(L, od[d], &open);
        kn_kx *jb = loop(L, od[r - 1] / block, &open);
        v[a] = loop(L, od[a], &open);
        v[r - 1] = madd(L, loop(L, block, &open), jb, block);
        kl_store(L, out[0], dot(L, r, v, os), kx_load(L, in[0], dot(L, r, v, st)));
        kl_end_n(L, open);
        return KN_OK;
    }
    int open = loops(L, r, od, v);
    kl_store(L, out[0], dot(L, r, v, os), kx_load(L, in[0], dot(L, r, v, st)));
    kl_end_n(L, open);
    return KN_OK;
}

static kn_status lower_expand(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    (void)n;
    const kn_kbuf *o = out[0];
    kn_type t = kn_type_make(in[0]->dtype, in[0]->rank, in[0]->dims);
    int64_t bs[KN_MAX_RANK], os[KN_MAX_RANK];
    kn_bcast_strides(&t, o->rank, o->dims, bs);
    kn_strides(o->rank, o->dims, os);
    kn_kx *v[KN_MAX_RANK];
    int open = loops(L, o->rank, o->dims, v);
    kl_store(L, out[0], dot(L, o->rank, v, os), kx_load(L, in[0], dot(L, o->rank, v, bs)));
    kl_end_n(L, open);
    return KN_OK;
}

/* ---- Concat, Split: blocks of `inner * extent` elements per outer index ---- */

static kn_status lower_concat(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    const kn_kbuf *o = out[0];
    int a;
    kn_status st = axis_attr(L, n, n->opset < 4 ? 1 : 0, o->rank, 0, &a);
    if (st) return st;
    int64_t outer = kn_prod(o->dims, 0, a), inner = kn_prod(o->dims, a + 1, o->rank);
    int64_t oblk = o->dims[a] * inner, off = 0;
    for (int i = 0; i < n->nin; i++) {
        int64_t blk = in[i]->dims[a] * inner;
        if (!blk) continue;
        int open = 0;
        kn_kx *k = loop(L, outer, &open);
        move(L, out[0], madd(L, kx_int(L, off), k, oblk), in[i], madd(L, kx_int(L, 0), k, blk),
             blk);
        kl_end_n(L, open);
        off += blk;
    }
    return KN_OK;
}

static kn_status lower_split(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                             kn_kbuf *const *out) {
    const kn_kbuf *x = in[0];
    int a;
    kn_status st = axis_attr(L, n, 0, x->rank, 0, &a);
    if (st) return st;
    int64_t outer = kn_prod(x->dims, 0, a), inner = kn_prod(x->dims, a + 1, x->rank);
    int64_t xblk = x->dims[a] * inner, off = 0;
    for (int j = 0; j < n->nout; j++) {
        if (!out[j]) return kn_diag(kl_ctx(L), n, KN_EUNSUPPORTED, "omitted Split output");
        int64_t blk = out[j]->dims[a] * inner;
        if (!blk) continue;
        int open = 0;
        kn_kx *k = loop(L, outer, &open);
        move(L, out[j], madd(L, kx_int(L, 0), k, blk), in[0], madd(L, kx_int(L, off), k, xblk),
             blk);
        kl_end_n(L, open);
        off += blk;
    }
    return KN_OK;
}

/* ---- Slice ---- */

/* Start and step of every axis of x, as slice_params in ir/ops/tensor.c computes
 * them; the extents are the output's dims. */
static kn_status slice_params(kn_lower *L, const kn_node *n, const kn_kbuf *x, int64_t *start,
                              int64_t *step) {
    kn_ctx *cx = kl_ctx(L);
    int r = x->rank;
    int64_t s_[KN_MAX_RANK], e_[KN_MAX_RANK], ax[KN_MAX_RANK], sp[KN_MAX_RANK];
    int ns, ne, na, np = -1;
    kn_status st;
    if ((st = ints_from(L, n, "starts", 1, 10, s_, KN_MAX_RANK, &ns)) ||
        (st = ints_from(L, n, "ends", 2, 10, e_, KN_MAX_RANK, &ne)) ||
        (st = ints_from(L, n, "axes", 3, 10, ax, KN_MAX_RANK, &na)))
        return st;
    if (n->opset >= 10 && (st = ints_from(L, n, "steps", 4, 10, sp, KN_MAX_RANK, &np))) return st;
    if (ns < 0 || ns != ne) return kn_diag(cx, n, KN_EINVAL, "bad starts/ends");
    for (int d = 0; d < r; d++) start[d] = 0, step[d] = 1;
    for (int i = 0; i < ns; i++) {
        int a = i;
        if (na >= 0 && (st = kn_axis(cx, n, ax[i], r, 0, &a))) return st;
        int64_t s = s_[i], k = np >= 0 ? sp[i] : 1, d = x->dims[a];
        if (s < 0) s += d;
        if (k > 0)
            s = s < 0 ? 0 : s > d ? d : s;
        else
            s = s < 0 ? 0 : s > d - 1 ? d - 1 : s;
        start[a] = s;
        step[a] = k;
    }
    return KN_OK;
}

static kn_status lower_slice(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                             kn_kbuf *const *out) {
    const kn_kbuf *x = in[0], *o = out[0];
    int r = x->rank;
    int64_t start[KN_MAX_RANK], step[KN_MAX_RANK], xs[KN_MAX_RANK], os[KN_MAX_RANK];
    kn_status st = slice_params(L, n, x, start, step);
    if (st || !o->numel) return st;
    kn_strides(r, x->dims, xs);
    kn_strides(r, o->dims, os);
    int64_t base = 0;
    for (int d = 0; d < r; d++) {
        base += start[d] * xs[d];
        xs[d] *= step[d];
    }
    kn_kx *v[KN_MAX_RANK];
    int open = loops(L, r, o->dims, v);
    kl_store(L, out[0], dot(L, r, v, os),
             kx_load(L, in[0], kx_bin(L, KX_ADD, kx_int(L, base), dot(L, r, v, xs))));
    kl_end_n(L, open);
    return KN_OK;
}

/* ---- Pad ---- */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

static kn_status pad_params(kn_lower *L, const kn_node *n, int r, int *mode, int64_t *pads) {
    kn_ctx *cx = kl_ctx(L);
    const char *m = kn_attr_str(cx, n, "mode", "constant");
    if (kn_failed(cx)) return cx->status;
    *mode = !strcmp(m, "reflect") ? PAD_REFLECT
            : !strcmp(m, "edge")  ? PAD_EDGE
            : !strcmp(m, "wrap")  ? PAD_WRAP
                                  : PAD_CONSTANT;
    int np, na = -1;
    int64_t axes[KN_MAX_RANK];
    kn_status st =
        ints_from(L, n, n->opset < 2 ? "paddings" : "pads", 1, 11, pads, 2 * KN_MAX_RANK, &np);
    if (!st && n->opset >= 18) st = ints_from(L, n, "axes", 3, 18, axes, KN_MAX_RANK, &na);
    if (st) return st;
    if (na >= 0) return kn_pad_axes(cx, n, r, axes, na, pads, np);
    if (np != 2 * r) return kn_diag(cx, n, KN_EINVAL, "%d pads for an input of rank %d", np, r);
    return KN_OK;
}

/* Output position c - lo along an axis of extent e, mapped into [0, e) by mode:
 * edge clamps, reflect mirrors about both ends (period 2(e-1)). Constant leaves it
 * and adds the range test to *inside. */
static kn_kx *pad_coord(kn_lower *L, int mode, kn_kx *c, int64_t e, kn_kx **inside) {
    if (mode == PAD_CONSTANT) {
        *inside = land(L, *inside, in_range(L, c, e));
        return c;
    }
    if (mode == PAD_EDGE || e == 1) return kmax(L, kmin(L, c, e - 1), 0);
    if (mode == PAD_WRAP) { /* ((c % e) + e) % e */
        kn_kx *m = kx_var(L, kl_decl(L, KN_I64, kx_bin(L, KX_MOD, c, kx_int(L, e))));
        return kx_select(L, kx_bin(L, KX_LT, m, kx_int(L, 0)), kx_bin(L, KX_ADD, m, kx_int(L, e)),
                         m);
    }
    int64_t p = 2 * (e - 1);
    kn_kx *m = kx_var(L, kl_decl(L, KN_I64, kx_bin(L, KX_MOD, c, kx_int(L, p))));
    m = kx_var(L, kl_decl(L, KN_I64,
                          kx_select(L, kx_bin(L, KX_LT, m, kx_int(L, 0)),
                                    kx_bin(L, KX_ADD, m, kx_int(L, p)), m)));
    return kx_select(L, kx_bin(L, KX_LT, m, kx_int(L, e)), m, kx_bin(L, KX_SUB, kx_int(L, p), m));
}

static kn_status lower_pad(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    const kn_kbuf *x = in[0], *o = out[0];
    int r = x->rank, mode;
    int64_t pads[2 * KN_MAX_RANK], xs[KN_MAX_RANK], os[KN_MAX_RANK];
    kn_status st = pad_params(L, n, r, &mode, pads);
    if (st || !o->numel) return st;
    kn_strides(r, x->dims, xs);
    kn_strides(r, o->dims, os);
    bool none = o->numel == x->numel; /* no pads (torch's AvgPool2d export): a copy of the
                                         whole, which the plan turns into shared storage
                                         (passes/plan.c copy_alias), as Identity's */
    for (int d = 0; d < 2 * r; d++) none = none && pads[d] == 0;
    if (none) {
        kl_copy(L, out[0], kx_int(L, 0), in[0], kx_int(L, 0), kx_int(L, x->numel));
        return KN_OK;
    }
    kn_kx *fill = kx_const(L, x->dtype, 0);
    if (n->opset < 11)
        fill = kx_const(L, x->dtype, kn_attr_float(kl_ctx(L), n, "value", 0));
    else if (n->nin > 2 && in[2] && in[2]->numel > 0)
        fill = kx_load(L, in[2], kx_int(L, 0));
    kn_kx *v[KN_MAX_RANK], *inside = NULL, *off = kx_int(L, 0);
    int open = loops(L, r, o->dims, v);
    for (int d = 0; d < r; d++) {
        kn_kx *c = v[d];
        if (pads[d] || pads[r + d] || x->dims[d] != o->dims[d])
            c = pad_coord(L, mode, kx_bin(L, KX_SUB, c, kx_int(L, pads[d])), x->dims[d], &inside);
        off = madd(L, off, c, xs[d]);
    }
    kn_kx *oi = dot(L, r, v, os);
    if (inside) {
        kl_if(L, inside);
        kl_store(L, out[0], oi, kx_load(L, in[0], off));
        kl_else(L);
        kl_store(L, out[0], oi, fill);
        kl_end(L);
    } else {
        kl_store(L, out[0], oi, kx_load(L, in[0], off));
    }
    kl_end_n(L, open);
    return KN_OK;
}

/* ---- Tile: output axis d is rep_d copies of input axis d ---- */

static kn_status lower_tile(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    (void)n;
    const kn_kbuf *x = in[0], *o = out[0];
    if (!o->numel) return KN_OK;
    int64_t xs[KN_MAX_RANK], os[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xs);
    kn_strides(o->rank, o->dims, os);
    kn_kx *oi = kx_int(L, 0), *xi = kx_int(L, 0);
    int open = 0;
    for (int d = 0; d < x->rank; d++) {
        kn_kx *t = loop(L, o->dims[d] / x->dims[d], &open);
        oi = madd(L, oi, t, x->dims[d] * os[d]);
    }
    for (int d = 0; d < x->rank; d++) {
        kn_kx *i = loop(L, x->dims[d], &open);
        oi = madd(L, oi, i, os[d]);
        xi = madd(L, xi, i, xs[d]);
    }
    kl_store(L, out[0], oi, kx_load(L, in[0], xi));
    kl_end_n(L, open);
    return KN_OK;
}

/* ---- DepthToSpace, SpaceToDepth ---- */

/* Both move element (n, c, h*b+i, w*b+j) of the space side to channel (i*b+j)*C + c
 * (DCR) or c*b*b + i*b + j (CRD) at (n, h, w) of the depth side, as in the
 * interpreter; every offset is linear in the six loop indices. */
static kn_status lower_depthtospace(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                    kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    int64_t b = kn_attr_int(cx, n, "blocksize", 0);
    const char *mode = kn_attr_str(cx, n, "mode", "DCR");
    if (kn_failed(cx)) return cx->status;
    bool crd = !strcmp(mode, "CRD"), d2s = n->op == KN_OP_DEPTHTOSPACE;
    kn_kbuf *space = d2s ? out[0] : in[0], *deep = d2s ? in[0] : out[0];
    if (!space->numel) return KN_OK;
    int64_t N = space->dims[0], C = space->dims[1], H = space->dims[2] / b, W = space->dims[3] / b;
    int open = 0;
    kn_kx *vn = loop(L, N, &open), *vc = loop(L, C, &open), *vi = loop(L, b, &open),
          *vj = loop(L, b, &open), *vh = loop(L, H, &open), *vw = loop(L, W, &open);
    /* space offset ((n*C + c)*H*b + h*b + i)*W*b + w*b + j */
    kn_kx *so = madd(L, madd(L, kx_int(L, 0), vn, C * H * b * W * b), vc, H * b * W * b);
    so = madd(L, madd(L, madd(L, madd(L, so, vh, b * W * b), vi, W * b), vw, b), vj, 1);
    /* depth offset ((n*C*b*b + dc)*H + h)*W + w */
    kn_kx *dc = crd ? madd(L, madd(L, madd(L, kx_int(L, 0), vc, b * b), vi, b), vj, 1)
                    : madd(L, madd(L, madd(L, kx_int(L, 0), vi, b * C), vj, C), vc, 1);
    kn_kx *dof = madd(L, madd(L, madd(L, kx_int(L, 0), vn, C * b * b * H * W), dc, H * W), vh, W);
    dof = madd(L, dof, vw, 1);
    if (d2s)
        kl_store(L, space, so, kx_load(L, deep, dof));
    else
        kl_store(L, deep, dof, kx_load(L, space, so));
    kl_end_n(L, open);
    return KN_OK;
}

/* ---- EyeLike, Trilu ---- */

static kn_status lower_eyelike(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                               kn_kbuf *const *out) {
    (void)in;
    kn_ctx *cx = kl_ctx(L);
    int64_t k = kn_attr_int(cx, n, "k", 0);
    if (kn_failed(cx)) return cx->status;
    const kn_kbuf *o = out[0];
    int open = 0;
    kn_kx *i = loop(L, o->dims[0], &open), *j = loop(L, o->dims[1], &open);
    kn_kx *on = kx_bin(L, KX_EQ, kx_bin(L, KX_SUB, j, i), kx_int(L, k));
    kl_store(L, out[0], madd(L, j, i, o->dims[1]), kx_cast(L, o->dtype, on));
    kl_end_n(L, open);
    return KN_OK;
}

static kn_status lower_trilu(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                             kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    bool upper = kn_attr_int(cx, n, "upper", 1) != 0;
    if (kn_failed(cx)) return cx->status;
    const kn_kbuf *o = out[0];
    if (!o->numel) return KN_OK;
    /* k: a constant, else read at run time */
    kn_kx *k = kx_int(L, 0);
    const kn_tensor *kt = kl_const(L, n, 1);
    if (kt && kn_tensor_numel(kt) == 1)
        k = kx_int(L, kn_load_i64(kt->data, kt->type.dtype, 0));
    else if (n->nin > 1 && in[1] && in[1]->numel == 1)
        k = kx_cast(L, KN_I64, kx_load(L, in[1], kx_int(L, 0)));
    int r = o->rank;
    int64_t os[KN_MAX_RANK];
    kn_strides(r, o->dims, os);
    kn_kx *v[KN_MAX_RANK] = {0};
    int open = loops(L, r, o->dims, v);
    kn_kx *diff = kx_bin(L, KX_SUB, v[r - 1], v[r - 2]);
    kn_kx *keep = kx_bin(L, upper ? KX_GE : KX_LE, diff, k);
    kn_kx *i = dot(L, r, v, os);
    kl_store(L, out[0], i, kx_select(L, keep, kx_load(L, in[0], i), kx_const(L, in[0]->dtype, 0)));
    kl_end_n(L, open);
    return KN_OK;
}

/* ---- Constant, ConstantOfShape, Range (normally folded away) ---- */

/* Element 0 of constant t as an expression of dtype t. */
static kn_kx *const_elem(kn_lower *L, const kn_tensor *t) {
    kn_dtype dt = t->type.dtype;
    if (kn_dtype_get(dt)->is_float) return kx_const(L, dt, kn_load_f64(t->data, dt, 0));
    return kx_cast(L, dt, kx_int(L, kn_load_i64(t->data, dt, 0)));
}

/* Stores value (an expression without loads) into every element of b. */
static void fill(kn_lower *L, kn_kbuf *b, kn_kx *value) {
    int open = 0;
    kn_kx *i = loop(L, b->numel, &open);
    kl_store(L, b, i, value);
    kl_end_n(L, open);
}

static kn_status lower_constantofshape(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                       kn_kbuf *const *out) {
    (void)in;
    kn_ctx *cx = kl_ctx(L);
    kn_tensor *v = kn_attr_tensor(cx, n, "value");
    if (kn_failed(cx)) return cx->status;
    if (v && (v->type.dtype == KN_STRING || !v->data))
        return kn_diag(cx, n, KN_EUNSUPPORTED, "value is not numeric");
    fill(L, out[0], v ? const_elem(L, v) : kx_const(L, out[0]->dtype, 0));
    return KN_OK;
}

static kn_status lower_constant(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                kn_kbuf *const *out) {
    (void)in;
    const kn_attr *a = n->nattr == 1 ? &n->attrs[0] : NULL;
    kn_kx *v = NULL;
    if (a && a->kind == KN_ATTR_FLOAT)
        v = kx_const(L, KN_F32, a->f);
    else if (a && a->kind == KN_ATTR_INT)
        v = kx_int(L, a->i);
    else if (a && a->kind == KN_ATTR_TENSOR && a->t->data && a->t->type.dtype != KN_STRING &&
             kn_tensor_numel(a->t) == 1)
        v = const_elem(L, a->t);
    /* A larger constant is folded into a weight before lowering; one left here
     * would need a constant buffer the lowering cannot create. */
    if (!v) return kn_diag(kl_ctx(L), n, KN_EUNSUPPORTED, "constant was not folded");
    fill(L, out[0], v);
    return KN_OK;
}

static kn_status lower_range(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                             kn_kbuf *const *out) {
    (void)n;
    /* The length is the output's (static) extent; start and delta may be read at
     * run time. Values are start + i * delta, in i64 or f64 as the interpreter. */
    kn_dtype dt = out[0]->dtype, ct = kn_dtype_get(dt)->is_float ? KN_F64 : KN_I64;
    int open = 0;
    kn_kx *i = loop(L, out[0]->numel, &open);
    kn_kx *s = kx_cast(L, ct, kx_load(L, in[0], kx_int(L, 0)));
    kn_kx *d = kx_cast(L, ct, kx_load(L, in[2], kx_int(L, 0)));
    kl_store(L, out[0], i, kx_bin(L, KX_ADD, s, kx_bin(L, KX_MUL, kx_cast(L, ct, i), d)));
    kl_end_n(L, open);
    return KN_OK;
}

/* ---- Gather, GatherElements, GatherND ---- */

static kn_status lower_gather(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    const kn_kbuf *x = in[0];
    int a;
    kn_status st = axis_attr(L, n, 0, x->rank, 0, &a);
    if (st || !out[0]->numel) return st;
    if (!x->numel) { /* every index is out of range */
        fill_zero(L, out[0]);
        return KN_OK;
    }
    int64_t outer = kn_prod(x->dims, 0, a), inner = kn_prod(x->dims, a + 1, x->rank);
    int64_t d = x->dims[a], ni = in[1]->numel;
    int open = 0;
    kn_kx *k = loop(L, outer, &open), *j = loop(L, ni, &open);
    kn_kx *idx = gather_index(L, kx_load(L, in[1], j), d);
    kn_kx *oi = madd(L, madd(L, kx_int(L, 0), k, ni * inner), j, inner);
    move(L, out[0], oi, in[0], madd(L, madd(L, kx_int(L, 0), k, d * inner), idx, inner), inner);
    kl_end_n(L, open);
    return KN_OK;
}

static kn_status lower_gatherelements(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                      kn_kbuf *const *out) {
    const kn_kbuf *x = in[0], *ix = in[1];
    int a, r = x->rank;
    kn_status st = axis_attr(L, n, 0, r, 0, &a);
    if (st || !out[0]->numel) return st;
    if (!x->numel) {
        fill_zero(L, out[0]);
        return KN_OK;
    }
    int64_t xs[KN_MAX_RANK], is[KN_MAX_RANK];
    kn_strides(r, x->dims, xs);
    kn_strides(r, ix->dims, is);
    kn_kx *v[KN_MAX_RANK];
    int open = loops(L, r, ix->dims, v);
    kn_kx *ii = dot(L, r, v, is);
    kn_kx *idx = gather_index(L, kx_load(L, in[1], ii), x->dims[a]);
    kn_kx *save = v[a];
    v[a] = idx;
    kn_kx *xi = dot(L, r, v, xs);
    v[a] = save;
    kl_store(L, out[0], ii, kx_load(L, in[0], xi));
    kl_end_n(L, open);
    return KN_OK;
}

static kn_status lower_gathernd(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    const kn_kbuf *x = in[0], *ix = in[1];
    int b = (int)kn_attr_int(cx, n, "batch_dims", 0);
    if (kn_failed(cx)) return cx->status;
    if (!out[0]->numel) return KN_OK;
    if (!x->numel) {
        fill_zero(L, out[0]);
        return KN_OK;
    }
    int k = (int)ix->dims[ix->rank - 1];
    int64_t xs[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xs);
    int64_t batches = kn_prod(ix->dims, 0, b), per_batch = kn_prod(ix->dims, b, ix->rank - 1);
    int64_t batch_size = kn_prod(x->dims, b, x->rank), slice = kn_prod(x->dims, b + k, x->rank);
    int open = 0;
    kn_kx *vb = loop(L, batches, &open), *vt = loop(L, per_batch, &open);
    kn_kx *t = madd(L, vt, vb, per_batch);
    kn_kx *off = madd(L, kx_int(L, 0), vb, batch_size);
    for (int j = 0; j < k; j++) {
        kn_kx *raw = kx_load(L, in[1], madd(L, kx_int(L, j), t, k));
        off = madd(L, off, gather_index(L, raw, x->dims[b + j]), xs[b + j]);
    }
    move(L, out[0], madd(L, kx_int(L, 0), t, slice), in[0], off, slice);
    kl_end_n(L, open);
    return KN_OK;
}

/* ---- Scatter, ScatterElements, ScatterND ---- */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static kn_status reduction(kn_lower *L, const kn_node *n, int *red) {
    kn_ctx *cx = kl_ctx(L);
    const char *s = kn_attr_str(cx, n, "reduction", "none");
    if (kn_failed(cx)) return cx->status;
    *red = !strcmp(s, "add")   ? RED_ADD
           : !strcmp(s, "mul") ? RED_MUL
           : !strcmp(s, "max") ? RED_MAX
           : !strcmp(s, "min") ? RED_MIN
                               : RED_NONE;
    return KN_OK;
}

/* b[i] = b[i] <red> u, the interpreter's reduce_into (max/min keep b[i] unless u is
 * strictly greater/smaller). */
static void reduce_store(kn_lower *L, kn_kbuf *b, kn_kx *i, kn_kx *u, int red) {
    if (red == RED_NONE) {
        kl_store(L, b, i, u);
        return;
    }
    kn_kx *a = kx_load(L, b, i), *r;
    if (red == RED_ADD)
        r = kx_bin(L, KX_ADD, a, u);
    else if (red == RED_MUL)
        r = kx_bin(L, KX_MUL, a, u);
    else
        r = kx_select(L, kx_bin(L, red == RED_MAX ? KX_GT : KX_LT, a, u), a, u);
    kl_store(L, b, i, r);
}

/* Out-of-range indices: the interpreter reports them; generated code skips the
 * update (it cannot report errors and must not write out of bounds). */
static kn_status lower_scatterelements(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                       kn_kbuf *const *out) {
    const kn_kbuf *x = in[0], *ix = in[1];
    int a, red, r = x->rank;
    kn_status st = axis_attr(L, n, 0, r, 0, &a);
    if (st || (st = reduction(L, n, &red))) return st;
    move(L, out[0], kx_int(L, 0), in[0], kx_int(L, 0), x->numel);
    if (!ix->numel) return KN_OK;
    int64_t xs[KN_MAX_RANK], is[KN_MAX_RANK];
    kn_strides(r, x->dims, xs);
    kn_strides(r, ix->dims, is);
    kn_kx *v[KN_MAX_RANK];
    int open = loops(L, r, ix->dims, v);
    kn_kx *ii = dot(L, r, v, is);
    kn_kx *idx = norm_index(L, kx_load(L, in[1], ii), x->dims[a]);
    kl_if(L, in_range(L, idx, x->dims[a]));
    kn_kx *save = v[a];
    v[a] = idx;
    kn_kx *xi = dot(L, r, v, xs);
    v[a] = save;
    reduce_store(L, out[0], xi, kx_load(L, in[2], ii), red);
    kl_end(L);
    kl_end_n(L, open);
    return KN_OK;
}

static kn_status lower_scatternd(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                 kn_kbuf *const *out) {
    const kn_kbuf *x = in[0], *ix = in[1];
    int red;
    kn_status st = reduction(L, n, &red);
    if (st) return st;
    move(L, out[0], kx_int(L, 0), in[0], kx_int(L, 0), x->numel);
    int k = (int)ix->dims[ix->rank - 1];
    int64_t tuples = kn_prod(ix->dims, 0, ix->rank - 1), slice = kn_prod(x->dims, k, x->rank);
    if (!tuples || !slice) return KN_OK;
    int64_t xs[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xs);
    int open = 0;
    kn_kx *t = loop(L, tuples, &open), *off = kx_int(L, 0), *ok = NULL;
    for (int j = 0; j < k; j++) {
        kn_kx *idx = norm_index(L, kx_load(L, in[1], madd(L, kx_int(L, j), t, k)), x->dims[j]);
        ok = land(L, ok, in_range(L, idx, x->dims[j]));
        off = madd(L, off, idx, xs[j]);
    }
    kl_if(L, ok);
    kn_kx *ui = madd(L, kx_int(L, 0), t, slice);
    if (red == RED_NONE) {
        move(L, out[0], off, in[2], ui, slice);
    } else {
        int o2 = 0;
        kn_kx *e = loop(L, slice, &o2);
        reduce_store(L, out[0], kx_bin(L, KX_ADD, off, e),
                     kx_load(L, in[2], kx_bin(L, KX_ADD, ui, e)), red);
        kl_end_n(L, o2);
    }
    kl_end(L);
    kl_end_n(L, open);
    return KN_OK;
}

/* ---- OneHot, ReverseSequence ---- */

static kn_status lower_onehot(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                              kn_kbuf *const *out) {
    const kn_kbuf *x = in[0];
    int a;
    kn_status st = axis_attr(L, n, -1, x->rank, 1, &a);
    if (st || !out[0]->numel) return st;
    int64_t depth = out[0]->dims[a];
    int64_t outer = kn_prod(x->dims, 0, a), inner = kn_prod(x->dims, a, x->rank);
    int open = 0;
    kn_kx *o = loop(L, outer, &open), *j = loop(L, depth, &open), *i = loop(L, inner, &open);
    /* indices truncate toward zero, negatives count from the end of depth; one out
     * of range matches no position and gives `off` everywhere */
    kn_kx *idx = norm_index(L, kx_load(L, in[0], madd(L, i, o, inner)), depth);
    kn_kx *hot = kx_cast(L, KN_I64, kx_bin(L, KX_EQ, idx, j));
    kn_kx *oi = madd(L, madd(L, i, j, inner), o, depth * inner);
    kl_store(L, out[0], oi, kx_load(L, in[2], hot));
    kl_end_n(L, open);
    return KN_OK;
}

static kn_status lower_reversesequence(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                       kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    int ta = (int)kn_attr_int(cx, n, "time_axis", 0), ba = 1 - ta;
    if (kn_failed(cx)) return cx->status;
    const kn_kbuf *x = in[0];
    if (!x->numel) return KN_OK;
    int64_t xs[KN_MAX_RANK];
    kn_strides(x->rank, x->dims, xs);
    int64_t T = x->dims[ta], B = x->dims[ba], inner = kn_prod(x->dims, 2, x->rank);
    int open = 0;
    kn_kx *b = loop(L, B, &open);
    /* a length outside [0, T] (an error in the interpreter) is clamped into it */
    kn_kx *len = kx_var(
        L, kl_decl(L, KN_I64, kmax(L, kmin(L, kx_cast(L, KN_I64, kx_load(L, in[1], b)), T), 0)));
    kn_kx *t = loop(L, T, &open);
    kn_kx *src = kx_select(L, kx_bin(L, KX_LT, t, len),
                           kx_bin(L, KX_SUB, kx_bin(L, KX_SUB, len, kx_int(L, 1)), t), t);
    kn_kx *base = madd(L, kx_int(L, 0), b, xs[ba]);
    move(L, out[0], madd(L, base, t, xs[ta]), in[0], madd(L, base, src, xs[ta]), inner);
    kl_end_n(L, open);
    return KN_OK;
}

const kn_oplower kn_lower_tensor[] = {
    {KN_OP_RESHAPE, lower_copy},
    {KN_OP_FLATTEN, lower_copy},
    {KN_OP_SQUEEZE, lower_copy},
    {KN_OP_UNSQUEEZE, lower_copy},
    {KN_OP_TRANSPOSE, lower_transpose},
    {KN_OP_EXPAND, lower_expand},
    {KN_OP_CONCAT, lower_concat},
    {KN_OP_SPLIT, lower_split},
    {KN_OP_SLICE, lower_slice},
    {KN_OP_PAD, lower_pad},
    {KN_OP_TILE, lower_tile},
    {KN_OP_DEPTHTOSPACE, lower_depthtospace},
    {KN_OP_SPACETODEPTH, lower_depthtospace},
    {KN_OP_EYELIKE, lower_eyelike},
    {KN_OP_TRILU, lower_trilu},
    {KN_OP_CONSTANT, lower_constant},
    {KN_OP_CONSTANTOFSHAPE, lower_constantofshape},
    {KN_OP_RANGE, lower_range},
    {KN_OP_GATHER, lower_gather},
    {KN_OP_GATHERELEMENTS, lower_gatherelements},
    {KN_OP_GATHERND, lower_gathernd},
    {KN_OP_SCATTER, lower_scatterelements},
    {KN_OP_SCATTERELEMENTS, lower_scatterelements},
    {KN_OP_SCATTERND, lower_scatternd},
    {KN_OP_ONEHOT, lower_onehot},
    {KN_OP_REVERSESEQUENCE, lower_reversesequence},
    {KN_OP_COUNT, 0},
};
