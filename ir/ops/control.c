/* Operators of group 'control': If, Loop, Scan and SequenceMap (ops with subgraph
 * bodies), the sequence ops and the optional ops. See ir/ops.h for the infer/eval
 * contract.
 *
 * Sequences and optionals are kn_tensors of kind KN_KIND_SEQUENCE / KN_KIND_OPTIONAL
 * holding item pointers (ir/tensor.h). Tensors are never modified after their
 * producer ran, so sequence ops share item pointers instead of copying data.
 *
 * Subgraph ops: at run time (every input has data) infer gives outputs of the right
 * kind but unknown shape, and eval creates them from what the body produced. During
 * static inference (some input without data) infer first infers the bodies
 * (kn_infer_graph) and derives the output types from the body outputs.
 * Data movement copies elements as opaque blocks of the dtype's size (string
 * tensors copy their `char *`, which live as long as the run). */
#include "ir/ops.h"

#include <string.h>

/* ---- helpers ---- */

/* Type of a sequence (or optional) whose element tensors have dtype dt, shape unknown. */
static kn_type kind_type(kn_kind kind, kn_dtype dt) {
    kn_type t = kn_type_unknown(dt);
    t.kind = kind;
    return t;
}

/* The same type with its shape forgotten (kind, dtype and elem_kind kept). */
static kn_type shapeless(const kn_type *t) {
    kn_type u = kn_type_unknown(t->dtype);
    u.kind = t->kind;
    u.elem_kind = t->elem_kind;
    return u;
}

/* True if t's value is known: a tensor with data, a sequence/optional with items. */
static bool value_known(const kn_tensor *t) {
    if (!t) return true;
    if (t->type.kind == KN_KIND_TENSOR) return t->data != NULL;
    return t->nitems >= 0;
}

static bool all_known(const kn_node *n, kn_tensor *const *in) {
    for (int i = 0; i < n->nin; i++)
        if (!value_known(in[i])) return false;
    return true;
}

/* New sequence of nitems (unset) items whose element type is dt. */
static kn_tensor *new_seq(kn_exec *ex, kn_dtype dt, int nitems) {
    kn_type ty = kind_type(KN_KIND_SEQUENCE, dt);
    kn_tensor *s = kn_tensor_typed(kn_exec_arena(ex), &ty);
    s->nitems = nitems;
    s->items = kn_arena_array(kn_exec_arena(ex), (size_t)nitems + 1, sizeof *s->items);
    KN_ASSERT(s->items);
    return s;
}

/* Requires input i to be present and of the given kind. */
static kn_status need_kind(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, int i,
                           kn_kind kind) {
    static const char *names[] = {"a tensor", "a sequence", "an optional"};
    if (i >= n->nin || !in[i]) return kn_diag(cx, n, KN_EINVAL, "input %d is required", i);
    if (in[i]->type.kind != kind)
        return kn_diag(cx, n, KN_EINVAL, "input %d must be %s, not %s", i, names[kind],
                       names[in[i]->type.kind]);
    return KN_OK;
}

/* Reads the integer scalar (or 1-element tensor) t, input number i. */
static kn_status read_scalar_int(kn_ctx *cx, const kn_node *n, const kn_tensor *t, int i,
                                 int64_t *v) {
    if (!kn_dtype_get(t->type.dtype)->is_int)
        return kn_diag(cx, n, KN_EINVAL, "input %d must be an integer tensor, not %s", i,
                       kn_dtype_name(t->type.dtype));
    if (kn_tensor_numel(t) != 1)
        return kn_diag(cx, n, KN_EINVAL, "input %d must hold a single value", i);
    *v = kn_load_i64(t->data, t->type.dtype, 0);
    return KN_OK;
}

/* Reads a boolean scalar (any numeric dtype, nonzero is true). */
static kn_status read_scalar_bool(kn_ctx *cx, const kn_node *n, const kn_tensor *t,
                                  const char *what, bool *v) {
    if (t->type.kind != KN_KIND_TENSOR || kn_tensor_numel(t) != 1)
        return kn_diag(cx, n, KN_EINVAL, "%s must be a tensor holding a single value", what);
    *v = kn_load_f64(t->data, t->type.dtype, 0) != 0;
    return KN_OK;
}

/* Stores value v as output j: copied into out[j] if infer had it allocated, else
 * out[j] becomes v. */
static kn_status set_out(kn_exec *ex, const kn_node *n, kn_tensor **out, int j, kn_tensor *v) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (!out[j]) {
        out[j] = v;
        return KN_OK;
    }
    char a[128], b[128];
    if (v->type.kind != KN_KIND_TENSOR || out[j]->type.dtype != v->type.dtype ||
        !kn_type_equal(&out[j]->type, &v->type))
        return kn_diag(cx, n, KN_EINTERNAL, "output %d is %s, inferred %s", j,
                       kn_type_str(&v->type, a, sizeof a), kn_type_str(&out[j]->type, b, sizeof b));
    memcpy(out[j]->data, v->data, kn_tensor_nbytes(v));
    return KN_OK;
}

/* Sequence position p (input i) normalized into [0, len) (or [0, len] with extra=1). */
kn_status kn_seq_pos(kn_ctx *cx, const kn_node *n, const kn_tensor *t, int i, int len, int extra,
                     int *out) {
    int64_t p = 0;
    if (read_scalar_int(cx, n, t, i, &p)) return cx->status;
    int64_t hi = len + extra;
    if (p < -(int64_t)len || p >= hi)
        return kn_diag(cx, n, KN_EINVAL, "position %lld is out of range for a sequence of %d",
                       (long long)p, len);
    *out = (int)(p < 0 ? p + len : p);
    return KN_OK;
}

/* The element tensor at index idx along axis of x, with that axis removed. */
static kn_tensor *slice_axis(kn_exec *ex, const kn_node *n, const kn_tensor *x, int axis,
                             int64_t idx) {
    int64_t dims[KN_MAX_RANK];
    int r = 0;
    for (int d = 0; d < x->type.rank; d++)
        if (d != axis) dims[r++] = x->type.dims[d];
    kn_tensor *y = kn_exec_tensor(ex, n, x->type.dtype, r, dims);
    if (!y) return NULL;
    size_t es = kn_elem_size(x->type.dtype);
    int64_t outer = kn_prod(x->type.dims, 0, axis), len = x->type.dims[axis];
    size_t inner = (size_t)kn_prod(x->type.dims, axis + 1, x->type.rank) * es;
    for (int64_t o = 0; o < outer; o++)
        memcpy((char *)y->data + (size_t)o * inner,
               (const char *)x->data + (size_t)(o * len + idx) * inner, inner);
    return y;
}

/* Type of the concatenation of items[0..cnt) along axis (new_axis: stacked along a
 * new axis at that position). Items must be tensors of one dtype and equal shapes
 * except along axis. */
static kn_status concat_type(kn_ctx *cx, const kn_node *n, kn_tensor *const *items, int cnt,
                             int64_t axis, bool new_axis, kn_type *out) {
    if (cnt == 0) return kn_diag(cx, n, KN_EINVAL, "cannot concatenate an empty sequence");
    const kn_type *t0 = &items[0]->type;
    int ax;
    if (kn_axis(cx, n, axis, t0->rank, new_axis ? 1 : 0, &ax)) return cx->status;
    if (new_axis && t0->rank + 1 > KN_MAX_RANK)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "result rank exceeds %d", KN_MAX_RANK);
    int64_t along = 0;
    for (int i = 0; i < cnt; i++) {
        const kn_type *t = &items[i]->type;
        if (t->kind != KN_KIND_TENSOR || t->dtype != t0->dtype || t->rank != t0->rank)
            return kn_diag(cx, n, KN_EINVAL, "item %d differs in type or rank from item 0", i);
        for (int d = 0; d < t->rank; d++)
            if ((new_axis || d != ax) && t->dims[d] != t0->dims[d])
                return kn_diag(cx, n, KN_EINVAL, "item %d has dim %d = %lld, item 0 has %lld", i, d,
                               (long long)t->dims[d], (long long)t0->dims[d]);
        along += new_axis ? 1 : t->dims[ax];
    }
    int r = 0;
    out->kind = KN_KIND_TENSOR;
    out->dtype = t0->dtype;
    for (int d = 0; d <= t0->rank; d++) {
        if (d == ax) out->dims[r++] = along;
        if (d < t0->rank && (new_axis || d != ax)) out->dims[r++] = t0->dims[d];
    }
    out->rank = r;
    return KN_OK;
}

/* Writes the concatenation of items along axis into dst (whose type came from
 * concat_type). axis counts item dims: with new_axis each item has a size-1 dim
 * inserted there. NULL items are written as zeros of item `model`'s size. */
static void concat_into(kn_tensor *dst, kn_tensor *const *items, int cnt, int axis,
                        const kn_tensor *model) {
    size_t es = kn_elem_size(dst->type.dtype);
    int64_t outer = kn_prod(model->type.dims, 0, axis);
    size_t off = 0;
    for (int64_t o = 0; o < outer; o++)
        for (int i = 0; i < cnt; i++) {
            const kn_tensor *t = items[i] ? items[i] : model;
            size_t chunk = (size_t)(outer ? kn_tensor_numel(t) / outer : 0) * es;
            if (items[i]) memcpy((char *)dst->data + off, (const char *)t->data + o * chunk, chunk);
            off += chunk;
        }
}

/* Stacks items[0..cnt) (NULL: zeros) along a new axis. When no item is present the
 * element type comes from decl (the body's declared output): shape [0, ...] when its
 * dims are known, else [0]. */
static kn_status stack(kn_exec *ex, const kn_node *n, kn_tensor *const *items, int cnt, int axis,
                       const kn_type *decl, kn_tensor **res) {
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_tensor *model = NULL;
    for (int i = 0; i < cnt && !model; i++) model = items[i];
    if (!model) {
        kn_dtype dt = decl->dtype ? decl->dtype : KN_F32;
        int64_t dims[KN_MAX_RANK] = {0};
        int r = 1;
        if (kn_type_static(decl) && decl->rank < KN_MAX_RANK) {
            int ax = axis < 0 ? axis + decl->rank + 1 : axis;
            if (ax < 0 || ax > decl->rank) ax = 0;
            r = 0;
            for (int d = 0; d <= decl->rank; d++) {
                if (d == ax) dims[r++] = cnt;
                if (d < decl->rank) dims[r++] = decl->dims[d];
            }
        } else {
            dims[0] = cnt;
        }
        *res = kn_exec_tensor(ex, n, dt, r, dims);
        return *res ? KN_OK : cx->status;
    }
    kn_tensor **full = kn_arena_array(kn_exec_arena(ex), (size_t)cnt + 1, sizeof *full);
    KN_ASSERT(full);
    for (int i = 0; i < cnt; i++) full[i] = items[i] ? items[i] : (kn_tensor *)model;
    kn_type ty = kn_type_unknown(KN_UNDEF);
    if (concat_type(cx, n, full, cnt, axis, true, &ty)) return cx->status;
    *res = kn_exec_tensor(ex, n, ty.dtype, ty.rank, ty.dims);
    if (!*res) return cx->status;
    int ax = axis < 0 ? axis + model->type.rank + 1 : axis;
    concat_into(*res, items, cnt, ax, model);
    return KN_OK;
}

/* Growable list of tensors in the run's arena. */
typedef struct tlist {
    int n, cap;
    kn_tensor **v;
} tlist;

static void tlist_push(kn_arena *a, tlist *l, kn_tensor *t) {
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        kn_tensor **v = kn_arena_array(a, (size_t)cap, sizeof *v);
        KN_ASSERT(v);
        if (l->n) memcpy(v, l->v, (size_t)l->n * sizeof *v);
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = t;
}

/* Output type j of a subgraph op at run time: the kind of the body's declared output,
 * shape unknown so eval creates it. */
static kn_type body_out_type(const kn_graph *body, int j) {
    return shapeless(&body->outputs[j]->type);
}

/* t (a body's declared or inferred output type) with a new axis of unknown extent
 * at position axis (negative counts from the end of the result): scan outputs. */
static kn_type with_new_axis(const kn_type *t, int64_t axis) {
    if (t->kind != KN_KIND_TENSOR || t->rank < 0 || t->rank >= KN_MAX_RANK)
        return kn_type_unknown(t->dtype);
    int r = t->rank + 1;
    int64_t ax = axis < 0 ? axis + r : axis;
    if (ax < 0 || ax >= r) return kn_type_unknown(t->dtype);
    kn_type u = *t;
    u.rank = r;
    for (int d = 0, k = 0; d < r; d++) {
        u.dims[d] = d == ax ? -1 : t->dims[k];
        u.sym[d] = d == ax ? NULL : t->sym[k];
        if (d != ax) k++;
    }
    return u;
}

/* Before a body is inferred statically: a body input whose declared type lacks the
 * dtype or rank takes them from the value the node feeds it (dims unknown, since a
 * loop-carried value may change shape between iterations). */
static void type_body_input(kn_value *v, const kn_type *actual) {
    if (v->type.dtype != KN_UNDEF && v->type.rank >= 0) return;
    if (v->type.dtype != KN_UNDEF && v->type.dtype != actual->dtype) return;
    kn_type t = *actual;
    for (int d = 0; d < t.rank; d++) t.dims[d] = -1, t.sym[d] = NULL;
    if (v->type.rank >= 0 && v->type.kind == t.kind) t = v->type, t.dtype = actual->dtype;
    v->type = t;
}

/* Merges two possible types of one value (If branches): dims that differ become
 * unknown, a differing rank makes the rank unknown. */
static kn_type merge_types(const kn_type *a, const kn_type *b) {
    if (a->kind == b->kind && !a->dtype) return shapeless(b); /* a not inferred */
    if (a->kind != b->kind || a->dtype != b->dtype) return shapeless(a);
    if (a->rank != b->rank) return shapeless(a);
    kn_type u = *a;
    for (int d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d]) u.dims[d] = -1, u.sym[d] = NULL;
    return u;
}

static kn_graph *need_graph(kn_ctx *cx, const kn_node *n, const char *name) {
    kn_graph *g = kn_attr_graph(cx, n, name);
    if (!g && !kn_failed(cx)) kn_diag(cx, n, KN_EINVAL, "graph attribute '%s' is required", name);
    return g;
}

/* ---- If ---- */

static kn_status infer_if(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_graph *th = need_graph(cx, n, "then_branch");
    kn_graph *el = th ? need_graph(cx, n, "else_branch") : NULL;
    if (!el) return cx->status;
    if (need_kind(cx, n, in, 0, KN_KIND_TENSOR)) return cx->status;
    if (th->nout != n->nout || el->nout != n->nout)
        return kn_diag(cx, n, KN_EINVAL,
                       "then_branch has %d outputs and else_branch %d, the node has %d", th->nout,
                       el->nout, n->nout);
    if (in[0]->data) {
        for (int j = 0; j < n->nout; j++) out[j] = body_out_type(th, j);
        return KN_OK;
    }
    /* A branch whose inference fails cannot run for these input shapes; the other
     * one decides the types and the invalid one is remembered (lowered as a run-time
     * error, ir/lower/control.c). Both failing is the model's error. */
    kn_graph *br[2] = {th, el};
    kn_ctx bcx[2];
    for (int b = 0; b < 2; b++) {
        kn_ctx_init(&bcx[b], NULL);
        br[b]->invalid = NULL;
        if (kn_infer_graph(&bcx[b], br[b]))
            br[b]->invalid = kn_arena_strdup(br[b]->arena, bcx[b].msg);
    }
    if (th->invalid && el->invalid)
        return kn_diag(cx, n, bcx[0].status, "then_branch: %s", bcx[0].msg);
    for (int j = 0; j < n->nout; j++) {
        const kn_type *a = &th->outputs[j]->type, *b = &el->outputs[j]->type;
        out[j] = th->invalid ? *b : el->invalid ? *a : merge_types(a, b);
    }
    return KN_OK;
}

static kn_status eval_if(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    bool c = false;
    if (read_scalar_bool(cx, n, in[0], "cond", &c)) return cx->status;
    kn_graph *g = kn_attr_graph(cx, n, c ? "then_branch" : "else_branch");
    kn_tensor **res = kn_arena_array(kn_exec_arena(ex), (size_t)g->nout + 1, sizeof *res);
    KN_ASSERT(res);
    if (kn_exec_subgraph(ex, g, NULL, res)) return cx->status;
    for (int j = 0; j < n->nout; j++)
        if (set_out(ex, n, out, j, res[j])) return cx->status;
    return KN_OK;
}

/* ---- Loop ---- */

/* Loop inputs: (M, cond, carried[0..nc)); outputs: (carried[0..nc), scans[0..ns)).
 * Body: (iter, cond, carried...) -> (cond, carried..., scan elements...). */
static kn_status infer_loop(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_graph *body = need_graph(cx, n, "body");
    if (!body) return cx->status;
    int nc = n->nin - 2, ns = n->nout - nc;
    if (ns < 0)
        return kn_diag(cx, n, KN_EINVAL, "%d loop-carried inputs but only %d outputs", nc, n->nout);
    if (body->nin != 2 + nc || body->nout != 1 + nc + ns)
        return kn_diag(cx, n, KN_EINVAL, "body has %d inputs and %d outputs, expected %d and %d",
                       body->nin, body->nout, 2 + nc, 1 + nc + ns);
    for (int i = 0; i < 2; i++)
        if (in[i] && need_kind(cx, n, in, i, KN_KIND_TENSOR)) return cx->status;
    bool known = all_known(n, in);
    if (!known) {
        kn_type it = kn_type_scalar(KN_I64), ct = kn_type_scalar(KN_BOOL);
        type_body_input(body->inputs[0], &it);
        type_body_input(body->inputs[1], &ct);
        for (int j = 0; j < nc; j++) type_body_input(body->inputs[2 + j], &in[2 + j]->type);
        if (kn_infer_graph(cx, body)) return cx->status;
    }
    for (int j = 0; j < nc; j++) {
        const kn_type *bt = &body->outputs[1 + j]->type;
        if (known) {
            out[j] = shapeless(bt);
            /* the body may change the kind (an optional in, a sequence out); with zero
             * iterations the output is the input */
            if (bt->dtype == KN_UNDEF) out[j] = shapeless(&in[2 + j]->type);
        } else {
            out[j] = bt->dtype ? merge_types(bt, &in[2 + j]->type) : shapeless(&in[2 + j]->type);
            if (bt->kind != in[2 + j]->type.kind) out[j] = shapeless(bt);
        }
    }
    for (int k = 0; k < ns; k++) {
        const kn_type *bt = &body->outputs[1 + nc + k]->type;
        out[nc + k] = known ? kn_type_unknown(bt->dtype) : with_new_axis(bt, 0);
    }
    return KN_OK;
}

static kn_status eval_loop(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_arena *a = kn_exec_arena(ex);
    kn_graph *body = kn_attr_graph(cx, n, "body");
    int nc = n->nin - 2, ns = n->nout - nc;
    int64_t max = INT64_MAX;
    bool cond = true;
    if (in[0] && read_scalar_int(cx, n, in[0], 0, &max)) return cx->status;
    if (in[1] && read_scalar_bool(cx, n, in[1], "cond", &cond)) return cx->status;
    kn_tensor **bin = kn_arena_array(a, (size_t)nc + 3, sizeof *bin);
    kn_tensor **bout = kn_arena_array(a, (size_t)(nc + ns) + 2, sizeof *bout);
    tlist *scans = kn_arena_array(a, (size_t)ns + 1, sizeof *scans);
    KN_ASSERT(bin && bout && scans);
    for (int j = 0; j < nc; j++) bin[2 + j] = in[2 + j];
    for (int64_t i = 0; i < max && cond; i++) {
        if (i >= INT32_MAX) return kn_diag(cx, n, KN_ELIMIT, "more than 2^31 iterations");
        bin[0] = kn_tensor_scalar_i64(a, KN_I64, i);
        bin[1] = kn_tensor_scalar_i64(a, KN_BOOL, 1);
        if (kn_exec_subgraph(ex, body, bin, bout)) return cx->status;
        if (read_scalar_bool(cx, n, bout[0], "the body's cond output", &cond)) return cx->status;
        for (int j = 0; j < nc; j++) bin[2 + j] = bout[1 + j];
        for (int k = 0; k < ns; k++) {
            if (bout[1 + nc + k]->type.kind != KN_KIND_TENSOR)
                return kn_diag(cx, n, KN_EINVAL, "scan output %d must be a tensor", k);
            tlist_push(a, &scans[k], bout[1 + nc + k]);
        }
    }
    for (int j = 0; j < nc; j++)
        if (set_out(ex, n, out, j, bin[2 + j])) return cx->status;
    for (int k = 0; k < ns; k++) {
        kn_tensor *r;
        if (stack(ex, n, scans[k].v, scans[k].n, 0, &body->outputs[1 + nc + k]->type, &r) ||
            set_out(ex, n, out, nc + k, r))
            return cx->status;
    }
    return KN_OK;
}

/* ---- Scan ---- */

/* Scan's layout: opset 8 has a leading sequence_lens input and batch axis 0. */
typedef struct scan_info {
    kn_graph *body;
    int first;             /* index of the first state input: 1 in opset 8, else 0 */
    int nstate, nin, nout; /* state vars, scan inputs, scan outputs */
    const int64_t *in_axes, *in_dirs, *out_axes, *out_dirs; /* NULL: all 0 */
} scan_info;

static kn_status scan_read(kn_ctx *cx, const kn_node *n, scan_info *s) {
    memset(s, 0, sizeof *s);
    s->body = need_graph(cx, n, "body");
    if (!s->body) return cx->status;
    int64_t m = kn_attr_int(cx, n, "num_scan_inputs", -1);
    if (kn_failed(cx)) return cx->status;
    s->first = n->opset < 9 ? 1 : 0;
    if (m < 1 || m > n->nin - s->first)
        return kn_diag(cx, n, KN_EINVAL, "num_scan_inputs is %lld, the node has %d inputs",
                       (long long)m, n->nin);
    s->nin = (int)m;
    s->nstate = n->nin - s->first - s->nin;
    s->nout = n->nout - s->nstate;
    if (s->nout < 0)
        return kn_diag(cx, n, KN_EINVAL, "%d state inputs but only %d outputs", s->nstate, n->nout);
    if (s->body->nin != s->nstate + s->nin || s->body->nout != s->nstate + s->nout)
        return kn_diag(cx, n, KN_EINVAL, "body has %d inputs and %d outputs, expected %d and %d",
                       s->body->nin, s->body->nout, s->nstate + s->nin, s->nstate + s->nout);
    struct {
        const char *name;
        const int64_t **v;
        int want;
    } lists[] = {
        {n->opset < 9 ? "directions" : "scan_input_directions", &s->in_dirs, s->nin},
        {"scan_input_axes", &s->in_axes, s->nin},
        {"scan_output_axes", &s->out_axes, s->nout},
        {"scan_output_directions", &s->out_dirs, s->nout},
    };
    for (int i = 0; i < 4; i++) {
        int c = kn_attr_ints(cx, n, lists[i].name, lists[i].v);
        if (kn_failed(cx)) return cx->status;
        if (c < 0)
            *lists[i].v = NULL;
        else if (c != lists[i].want)
            return kn_diag(cx, n, KN_EINVAL, "%s has %d values, expected %d", lists[i].name, c,
                           lists[i].want);
        if (n->opset < 9 && i > 0 && c >= 0)
            return kn_diag(cx, n, KN_EINVAL, "%s is not an attribute of Scan-8", lists[i].name);
    }
    return KN_OK;
}

static int64_t at(const int64_t *v, int i) {
    return v ? v[i] : 0;
}

static kn_status infer_scan(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    scan_info s;
    if (scan_read(cx, n, &s)) return cx->status;
    for (int i = s.first; i < n->nin; i++)
        if (need_kind(cx, n, in, i, KN_KIND_TENSOR)) return cx->status;
    if (s.first && in[0] && need_kind(cx, n, in, 0, KN_KIND_TENSOR)) return cx->status;
    bool known = all_known(n, in);
    if (known) {
        for (int j = 0; j < n->nout; j++) out[j] = body_out_type(s.body, j);
        return KN_OK;
    }
    /* the body sees states and scan-input slices without the batch (Scan-8) and scan axes */
    int64_t len = -1;
    for (int i = s.first; i < n->nin; i++) {
        kn_type t = in[i]->type;
        int scan = i >= s.first + s.nstate, drop = s.first + scan, ax = 0;
        if (scan && !s.first &&
            kn_axis(cx, n, at(s.in_axes, i - s.first - s.nstate), t.rank < 0 ? 1 : t.rank, 0, &ax))
            return cx->status;
        if (scan && t.rank > ax + s.first && len < 0) len = t.dims[ax + s.first];
        if (t.rank >= drop) {
            for (int k = 0; k < drop; k++) {
                int d = k == 0 && s.first ? 0 : ax;
                for (int e = d; e + 1 < t.rank; e++)
                    t.dims[e] = t.dims[e + 1], t.sym[e] = t.sym[e + 1];
                t.rank--;
            }
        }
        type_body_input(s.body->inputs[i - s.first], &t);
    }
    if (kn_infer_graph(cx, s.body)) return cx->status;
    for (int j = 0; j < s.nstate; j++) out[j] = in[s.first + j]->type;
    for (int k = 0; k < s.nout; k++) {
        const kn_type *bt = &s.body->outputs[s.nstate + k]->type;
        kn_type *o = &out[s.nstate + k];
        if (s.first) {
            kn_type u = with_new_axis(bt, 0);
            *o = with_new_axis(&u, 0);
            if (o->rank >= 2) {
                o->dims[0] = n->nin > 1 + s.nstate && in[1 + s.nstate]->type.rank > 0
                                 ? in[1 + s.nstate]->type.dims[0]
                                 : -1;
                o->dims[1] = len;
            }
        } else {
            int64_t ax = at(s.out_axes, k);
            *o = with_new_axis(bt, ax);
            if (o->rank > 0) o->dims[ax < 0 ? ax + o->rank : ax] = len;
        }
    }
    return KN_OK;
}

/* Runs the body over `len` steps for one batch entry: states[] in/out (nstate),
 * xs[] the scan inputs with their scan axis at axes[j], elems[k][t] the scan output
 * elements produced at step t. */
static kn_status scan_run(kn_exec *ex, const kn_node *n, const scan_info *s, kn_tensor **states,
                          kn_tensor *const *xs, const int *axes, int64_t len, kn_tensor ***elems) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_arena *a = kn_exec_arena(ex);
    kn_tensor **bin = kn_arena_array(a, (size_t)(s->nstate + s->nin) + 1, sizeof *bin);
    kn_tensor **bout = kn_arena_array(a, (size_t)(s->nstate + s->nout) + 1, sizeof *bout);
    KN_ASSERT(bin && bout);
    for (int64_t t = 0; t < len; t++) {
        for (int j = 0; j < s->nstate; j++) bin[j] = states[j];
        for (int j = 0; j < s->nin; j++) {
            int64_t pos = at(s->in_dirs, j) ? len - 1 - t : t;
            bin[s->nstate + j] = slice_axis(ex, n, xs[j], axes[j], pos);
            if (!bin[s->nstate + j]) return cx->status;
        }
        if (kn_exec_subgraph(ex, s->body, bin, bout)) return cx->status;
        for (int j = 0; j < s->nstate; j++) states[j] = bout[j];
        for (int k = 0; k < s->nout; k++) {
            if (bout[s->nstate + k]->type.kind != KN_KIND_TENSOR)
                return kn_diag(cx, n, KN_EINVAL, "scan output %d must be a tensor", k);
            elems[k][t] = bout[s->nstate + k];
        }
    }
    return KN_OK;
}

static kn_status eval_scan(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_arena *a = kn_exec_arena(ex);
    scan_info s;
    if (scan_read(cx, n, &s)) return cx->status;
    kn_tensor *const *states0 = in + s.first, *const *xs = in + s.first + s.nstate;
    kn_tensor **states = kn_arena_array(a, (size_t)s.nstate + 1, sizeof *states);
    kn_tensor ***elems = kn_arena_array(a, (size_t)s.nout + 1, sizeof *elems);
    int *axes = kn_arena_array(a, (size_t)s.nin + 1, sizeof *axes);
    KN_ASSERT(states && elems && axes);
    int base = s.first; /* opset 8: axis 0 is the batch, the scan axis is 1 */
    int64_t len = -1;
    for (int j = 0; j < s.nin; j++) {
        if (kn_axis(cx, n, at(s.in_axes, j), xs[j]->type.rank - base, 0, &axes[j]))
            return cx->status;
        int64_t l = xs[j]->type.dims[axes[j] + base];
        if (len >= 0 && l != len)
            return kn_diag(cx, n, KN_EINVAL, "scan input %d has %lld steps, input 0 has %lld", j,
                           (long long)l, (long long)len);
        len = l;
    }
    if (len > INT32_MAX) return kn_diag(cx, n, KN_ELIMIT, "more than 2^31 scan steps");
    for (int k = 0; k < s.nout; k++) {
        elems[k] = kn_arena_array(a, (size_t)len + 1, sizeof **elems);
        KN_ASSERT(elems[k]);
    }
    if (!s.first) {
        for (int j = 0; j < s.nstate; j++) states[j] = states0[j];
        if (scan_run(ex, n, &s, states, xs, axes, len, elems)) return cx->status;
        for (int j = 0; j < s.nstate; j++)
            if (set_out(ex, n, out, j, states[j])) return cx->status;
        for (int k = 0; k < s.nout; k++) {
            kn_tensor **v = elems[k], *r;
            int64_t ax = at(s.out_axes, k);
            if (at(s.out_dirs, k))
                for (int64_t t = 0; t < len / 2; t++) {
                    kn_tensor *tmp = v[t];
                    v[t] = v[len - 1 - t];
                    v[len - 1 - t] = tmp;
                }
            if (stack(ex, n, v, (int)len, (int)ax, &s.body->outputs[s.nstate + k]->type, &r) ||
                set_out(ex, n, out, s.nstate + k, r))
                return cx->status;
        }
        return KN_OK;
    }
    /* Scan-8: run each batch entry separately for its sequence_lens[b] steps; scan
     * outputs past a sequence's length are zeros. */
    for (int j = 0; j < s.nstate; j++)
        if (states0[j]->type.rank < 1)
            return kn_diag(cx, n, KN_EINVAL, "state input %d needs a batch axis", j);
    if (s.nin && xs[0]->type.rank < 2)
        return kn_diag(cx, n, KN_EINVAL, "scan inputs need batch and sequence axes");
    int64_t batch = s.nin ? xs[0]->type.dims[0] : 0;
    const kn_tensor *lens = in[0];
    if (lens && kn_tensor_numel(lens) != batch)
        return kn_diag(cx, n, KN_EINVAL, "sequence_lens has %lld values, the batch is %lld",
                       (long long)kn_tensor_numel(lens), (long long)batch);
    kn_tensor ***fin = kn_arena_array(a, (size_t)s.nstate + 1, sizeof *fin);
    kn_tensor ***per = kn_arena_array(a, (size_t)s.nout + 1, sizeof *per);
    kn_tensor **xb = kn_arena_array(a, (size_t)s.nin + 1, sizeof *xb);
    KN_ASSERT(fin && per && xb);
    for (int j = 0; j < s.nstate; j++) fin[j] = kn_arena_array(a, (size_t)batch + 1, sizeof **fin);
    for (int k = 0; k < s.nout; k++) per[k] = kn_arena_array(a, (size_t)batch + 1, sizeof **per);
    for (int64_t b = 0; b < batch; b++) {
        int64_t l = lens ? kn_load_i64(lens->data, lens->type.dtype, (size_t)b) : len;
        if (l < 0 || l > len)
            return kn_diag(cx, n, KN_EINVAL, "sequence_lens[%lld] = %lld is out of range",
                           (long long)b, (long long)l);
        for (int j = 0; j < s.nstate; j++)
            if (!(states[j] = slice_axis(ex, n, states0[j], 0, b))) return cx->status;
        for (int j = 0; j < s.nin; j++)
            if (!(xb[j] = slice_axis(ex, n, xs[j], 0, b))) return cx->status;
        for (int k = 0; k < s.nout; k++) memset(elems[k], 0, (size_t)len * sizeof **elems);
        if (scan_run(ex, n, &s, states, xb, axes, l, elems)) return cx->status;
        for (int j = 0; j < s.nstate; j++) fin[j][b] = states[j];
        for (int k = 0; k < s.nout; k++) {
            /* pad with zeros of the step's shape: stack() needs one present item */
            if (l == 0) continue;
            if (stack(ex, n, elems[k], (int)len, 0, &s.body->outputs[s.nstate + k]->type,
                      &per[k][b]))
                return cx->status;
        }
    }
    for (int j = 0; j < s.nstate; j++) {
        kn_tensor *r;
        if (stack(ex, n, fin[j], (int)batch, 0, &s.body->outputs[j]->type, &r) ||
            set_out(ex, n, out, j, r))
            return cx->status;
    }
    for (int k = 0; k < s.nout; k++) {
        kn_tensor *r;
        kn_type decl = with_new_axis(&s.body->outputs[s.nstate + k]->type, 0);
        if (decl.rank > 0) decl.dims[0] = len;
        if (stack(ex, n, per[k], (int)batch, 0, &decl, &r) || set_out(ex, n, out, s.nstate + k, r))
            return cx->status;
    }
    return KN_OK;
}

/* ---- SequenceMap ---- */

static kn_status infer_sequence_map(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                    kn_type *out) {
    kn_graph *body = need_graph(cx, n, "body");
    if (!body) return cx->status;
    if (need_kind(cx, n, in, 0, KN_KIND_SEQUENCE)) return cx->status;
    if (body->nin != n->nin || body->nout != n->nout)
        return kn_diag(cx, n, KN_EINVAL, "body has %d inputs and %d outputs, expected %d and %d",
                       body->nin, body->nout, n->nin, n->nout);
    for (int i = 1; i < n->nin; i++)
        if (!in[i]) return kn_diag(cx, n, KN_EINVAL, "input %d is required", i);
    if (!all_known(n, in)) {
        for (int i = 0; i < n->nin; i++) {
            kn_type t = in[i]->type;
            if (t.kind == KN_KIND_SEQUENCE) t.kind = KN_KIND_TENSOR;
            type_body_input(body->inputs[i], &t);
        }
        if (kn_infer_graph(cx, body)) return cx->status;
    }
    for (int j = 0; j < n->nout; j++) {
        out[j] = body->outputs[j]->type;
        out[j].kind = KN_KIND_SEQUENCE;
    }
    return KN_OK;
}

static kn_status eval_sequence_map(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                   kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_arena *a = kn_exec_arena(ex);
    kn_graph *body = kn_attr_graph(cx, n, "body");
    int len = in[0]->nitems;
    for (int i = 1; i < n->nin; i++)
        if (in[i]->type.kind == KN_KIND_SEQUENCE && in[i]->nitems != len)
            return kn_diag(cx, n, KN_EINVAL, "input %d has %d items, input 0 has %d", i,
                           in[i]->nitems, len);
    kn_tensor **bin = kn_arena_array(a, (size_t)n->nin + 1, sizeof *bin);
    kn_tensor **bout = kn_arena_array(a, (size_t)n->nout + 1, sizeof *bout);
    KN_ASSERT(bin && bout);
    for (int j = 0; j < n->nout; j++) {
        out[j] = new_seq(ex, body->outputs[j]->type.dtype, len);
        out[j]->type.dtype = body->outputs[j]->type.dtype;
    }
    for (int t = 0; t < len; t++) {
        for (int i = 0; i < n->nin; i++)
            bin[i] = in[i]->type.kind == KN_KIND_SEQUENCE ? in[i]->items[t] : in[i];
        if (kn_exec_subgraph(ex, body, bin, bout)) return cx->status;
        for (int j = 0; j < n->nout; j++) {
            if (bout[j]->type.kind != KN_KIND_TENSOR)
                return kn_diag(cx, n, KN_EINVAL, "body output %d must be a tensor", j);
            out[j]->items[t] = bout[j];
            out[j]->type.dtype = bout[j]->type.dtype;
        }
    }
    return KN_OK;
}

/* ---- sequences ---- */

static kn_status infer_sequence_empty(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                      kn_type *out) {
    (void)in;
    int64_t dt = kn_attr_int(cx, n, "dtype", KN_F32);
    if (kn_failed(cx)) return cx->status;
    if (!kn_dtype_valid((int)dt))
        return kn_diag(cx, n, KN_EINVAL, "dtype %lld is not a supported element type",
                       (long long)dt);
    out[0] = kind_type(KN_KIND_SEQUENCE, (kn_dtype)dt);
    return KN_OK;
}

static kn_status eval_sequence_empty(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                     kn_tensor **out) {
    (void)in;
    kn_type ty = kn_type_unknown(KN_UNDEF);
    if (infer_sequence_empty(kn_exec_ctx(ex), n, in, &ty)) return kn_exec_ctx(ex)->status;
    out[0] = new_seq(ex, ty.dtype, 0);
    return KN_OK;
}

static kn_status infer_sequence_construct(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                          kn_type *out) {
    for (int i = 0; i < n->nin; i++) {
        if (need_kind(cx, n, in, i, KN_KIND_TENSOR)) return cx->status;
        if (in[i]->type.dtype != in[0]->type.dtype)
            return kn_diag(cx, n, KN_EINVAL, "input %d is %s, input 0 is %s", i,
                           kn_dtype_name(in[i]->type.dtype), kn_dtype_name(in[0]->type.dtype));
    }
    out[0] = in[0]->type;
    for (int i = 1; i < n->nin; i++) out[0] = merge_types(out, &in[i]->type);
    out[0].kind = KN_KIND_SEQUENCE;
    return KN_OK;
}

static kn_status eval_sequence_construct(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                         kn_tensor **out) {
    out[0] = new_seq(ex, in[0]->type.dtype, n->nin);
    for (int i = 0; i < n->nin; i++) out[0]->items[i] = in[i];
    return KN_OK;
}

/* Checks that tensor input i may go into sequence s. */
static kn_status check_item(kn_ctx *cx, const kn_node *n, const kn_tensor *s, const kn_tensor *t,
                            int i) {
    if (s->type.dtype && t->type.dtype && s->type.dtype != t->type.dtype && s->nitems != 0)
        return kn_diag(cx, n, KN_EINVAL, "input %d is %s, the sequence holds %s", i,
                       kn_dtype_name(t->type.dtype), kn_dtype_name(s->type.dtype));
    return KN_OK;
}

static kn_status infer_sequence_insert(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                       kn_type *out) {
    if (need_kind(cx, n, in, 0, KN_KIND_SEQUENCE) || need_kind(cx, n, in, 1, KN_KIND_TENSOR) ||
        check_item(cx, n, in[0], in[1], 1))
        return cx->status;
    if (n->nin > 2 && in[2] && need_kind(cx, n, in, 2, KN_KIND_TENSOR)) return cx->status;
    /* the element type: the inserted tensor's, merged with the items already there */
    kn_type elem = in[0]->type;
    elem.kind = KN_KIND_TENSOR;
    if (elem.dtype == KN_UNDEF) elem.dtype = in[1]->type.dtype;
    out[0] = in[0]->nitems == 0 ? in[1]->type : merge_types(&elem, &in[1]->type);
    out[0].kind = KN_KIND_SEQUENCE;
    return KN_OK;
}

static kn_status eval_sequence_insert(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                      kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_tensor *s = in[0];
    int pos = s->nitems;
    if (n->nin > 2 && in[2] && kn_seq_pos(cx, n, in[2], 2, s->nitems, 1, &pos)) return cx->status;
    kn_tensor *r = new_seq(ex, in[1]->type.dtype, s->nitems + 1);
    for (int i = 0, k = 0; i <= s->nitems; i++) r->items[i] = i == pos ? in[1] : s->items[k++];
    out[0] = r;
    return KN_OK;
}

static kn_status infer_sequence_erase(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                      kn_type *out) {
    if (need_kind(cx, n, in, 0, KN_KIND_SEQUENCE)) return cx->status;
    if (n->nin > 1 && in[1] && need_kind(cx, n, in, 1, KN_KIND_TENSOR)) return cx->status;
    out[0] = in[0]->type;
    return KN_OK;
}

static kn_status eval_sequence_erase(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                     kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_tensor *s = in[0];
    if (s->nitems == 0) return kn_diag(cx, n, KN_EINVAL, "cannot erase from an empty sequence");
    int pos = s->nitems - 1;
    if (n->nin > 1 && in[1] && kn_seq_pos(cx, n, in[1], 1, s->nitems, 0, &pos)) return cx->status;
    kn_tensor *r = new_seq(ex, s->type.dtype, s->nitems - 1);
    for (int i = 0, k = 0; i < s->nitems; i++)
        if (i != pos) r->items[k++] = s->items[i];
    out[0] = r;
    return KN_OK;
}

static kn_status infer_sequence_at(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                   kn_type *out) {
    if (need_kind(cx, n, in, 0, KN_KIND_SEQUENCE) || need_kind(cx, n, in, 1, KN_KIND_TENSOR))
        return cx->status;
    const kn_tensor *s = in[0];
    out[0] = s->type;
    out[0].kind = KN_KIND_TENSOR;
    if (s->nitems >= 0 && in[1]->data) {
        int pos = 0;
        if (kn_seq_pos(cx, n, in[1], 1, s->nitems, 0, &pos)) return cx->status;
        out[0] = s->items[pos]->type;
    }
    return KN_OK;
}

static kn_status eval_sequence_at(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                  kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    int pos = 0;
    if (kn_seq_pos(cx, n, in[1], 1, in[0]->nitems, 0, &pos)) return cx->status;
    return set_out(ex, n, out, 0, in[0]->items[pos]);
}

static kn_status infer_sequence_length(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                       kn_type *out) {
    if (need_kind(cx, n, in, 0, KN_KIND_SEQUENCE)) return cx->status;
    out[0] = kn_type_scalar(KN_I64);
    return KN_OK;
}

static kn_status eval_sequence_length(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                      kn_tensor **out) {
    (void)ex;
    (void)n;
    kn_store_i64(out[0]->data, KN_I64, 0, in[0]->nitems);
    return KN_OK;
}

static kn_status infer_concat_from_sequence(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                            kn_type *out) {
    if (need_kind(cx, n, in, 0, KN_KIND_SEQUENCE)) return cx->status;
    int64_t axis = kn_attr_int(cx, n, "axis", INT64_MIN);
    int64_t new_axis = kn_attr_int(cx, n, "new_axis", 0);
    if (kn_failed(cx)) return cx->status;
    if (axis == INT64_MIN) return kn_diag(cx, n, KN_EINVAL, "attribute 'axis' is required");
    if (new_axis != 0 && new_axis != 1)
        return kn_diag(cx, n, KN_EINVAL, "new_axis must be 0 or 1, not %lld", (long long)new_axis);
    const kn_tensor *s = in[0];
    out[0] = kn_type_unknown(s->type.dtype);
    if (s->nitems < 0) {
        /* statically: the element type with the concatenation axis unknown */
        int r = s->type.rank, ax;
        if (r < 0 || r + (int)new_axis > KN_MAX_RANK) return KN_OK;
        if (kn_axis(cx, n, axis, r, (int)new_axis, &ax)) return cx->status;
        kn_type e = s->type;
        e.kind = KN_KIND_TENSOR;
        *out = new_axis ? with_new_axis(&e, ax) : e;
        out->dims[ax] = -1;
        out->sym[ax] = NULL;
        return KN_OK;
    }
    for (int i = 0; i < s->nitems; i++)
        if (!kn_type_static(&s->items[i]->type)) return KN_OK;
    return concat_type(cx, n, s->items, s->nitems, axis, new_axis, out);
}

static kn_status eval_concat_from_sequence(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                           kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_tensor *s = in[0];
    kn_type ty = kn_type_unknown(KN_UNDEF);
    if (infer_concat_from_sequence(cx, n, in, &ty)) return cx->status;
    if (!out[0] && !(out[0] = kn_exec_tensor(ex, n, ty.dtype, ty.rank, ty.dims))) return cx->status;
    int64_t axis = kn_attr_int(cx, n, "axis", 0);
    int r = s->items[0]->type.rank + (int)kn_attr_int(cx, n, "new_axis", 0);
    int ax = (int)(axis < 0 ? axis + r : axis);
    concat_into(out[0], s->items, s->nitems, ax, s->items[0]);
    return KN_OK;
}

/* SplitToSequence's pieces: sizes[0..*cnt) along the normalized *axis; *squeeze when
 * the split axis is dropped (no split input and keepdims=0). */
kn_status kn_split_plan(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_arena *a, int *axis,
                        int64_t **sizes, int64_t *cnt, bool *squeeze) {
    const kn_tensor *x = in[0], *split = n->nin > 1 ? in[1] : NULL;
    int64_t ax = kn_attr_int(cx, n, "axis", 0), keep = kn_attr_int(cx, n, "keepdims", 1);
    if (kn_failed(cx)) return cx->status;
    if (kn_axis(cx, n, ax, x->type.rank, 0, axis)) return cx->status;
    int64_t len = x->type.dims[*axis];
    *squeeze = false;
    if (!split) {
        *squeeze = keep == 0;
        *cnt = len;
        *sizes = kn_arena_array(a, (size_t)len + 1, sizeof **sizes);
        KN_ASSERT(*sizes);
        for (int64_t i = 0; i < len; i++) (*sizes)[i] = 1;
        return KN_OK;
    }
    if (!kn_dtype_get(split->type.dtype)->is_int)
        return kn_diag(cx, n, KN_EINVAL, "split must be an integer tensor");
    if (split->type.rank == 0) {
        int64_t c = kn_load_i64(split->data, split->type.dtype, 0);
        if (c <= 0) return kn_diag(cx, n, KN_EINVAL, "split %lld must be positive", (long long)c);
        *cnt = (len + c - 1) / c;
        *sizes = kn_arena_array(a, (size_t)*cnt + 1, sizeof **sizes);
        KN_ASSERT(*sizes);
        for (int64_t i = 0; i < *cnt; i++) (*sizes)[i] = i + 1 < *cnt ? c : len - c * i;
        return KN_OK;
    }
    if (split->type.rank != 1)
        return kn_diag(cx, n, KN_EINVAL, "split must be a scalar or 1-D, has rank %d",
                       split->type.rank);
    *cnt = split->type.dims[0];
    *sizes = kn_tensor_i64s(a, split);
    int64_t sum = 0;
    for (int64_t i = 0; i < *cnt; i++) {
        if ((*sizes)[i] < 0)
            return kn_diag(cx, n, KN_EINVAL, "split[%lld] is negative", (long long)i);
        sum += (*sizes)[i];
    }
    if (sum != len)
        return kn_diag(cx, n, KN_EINVAL, "split sums to %lld, the axis has %lld", (long long)sum,
                       (long long)len);
    return KN_OK;
}

static kn_status infer_split_to_sequence(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                         kn_type *out) {
    if (need_kind(cx, n, in, 0, KN_KIND_TENSOR)) return cx->status;
    if (n->nin > 1 && in[1] && need_kind(cx, n, in, 1, KN_KIND_TENSOR)) return cx->status;
    out[0] = kind_type(KN_KIND_SEQUENCE, in[0]->type.dtype);
    const kn_type *t = &in[0]->type;
    int64_t ax = kn_attr_int(cx, n, "axis", 0), keep = kn_attr_int(cx, n, "keepdims", 1);
    int axis;
    if (kn_failed(cx)) return cx->status;
    if (t->rank < 0) return KN_OK;
    if (kn_axis(cx, n, ax, t->rank, 0, &axis)) return cx->status;
    /* the pieces' type: the input's, the split axis 1 (or dropped) without a split
     * input, else unknown */
    bool split = n->nin > 1 && in[1];
    out[0] = *t;
    out[0].kind = KN_KIND_SEQUENCE;
    out[0].dims[axis] = split ? -1 : 1;
    out[0].sym[axis] = NULL;
    if (!split && keep == 0) {
        for (int d = axis; d + 1 < t->rank; d++)
            out[0].dims[d] = t->dims[d + 1], out[0].sym[d] = t->sym[d + 1];
        out[0].rank--;
    }
    return KN_OK;
}

static kn_status eval_split_to_sequence(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                        kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    const kn_tensor *x = in[0];
    int axis;
    int64_t *sizes = NULL, cnt = 0;
    bool squeeze;
    if (kn_split_plan(cx, n, in, kn_exec_arena(ex), &axis, &sizes, &cnt, &squeeze))
        return cx->status;
    if (cnt > INT32_MAX) return kn_diag(cx, n, KN_ELIMIT, "too many pieces");
    kn_tensor *s = new_seq(ex, x->type.dtype, (int)cnt);
    size_t es = kn_elem_size(x->type.dtype);
    int64_t outer = kn_prod(x->type.dims, 0, axis), len = x->type.dims[axis];
    size_t inner = (size_t)kn_prod(x->type.dims, axis + 1, x->type.rank) * es;
    int64_t start = 0;
    for (int64_t i = 0; i < cnt; i++) {
        int64_t dims[KN_MAX_RANK];
        int r = 0;
        for (int d = 0; d < x->type.rank; d++) {
            if (d != axis)
                dims[r++] = x->type.dims[d];
            else if (!squeeze)
                dims[r++] = sizes[i];
        }
        kn_tensor *y = kn_exec_tensor(ex, n, x->type.dtype, r, dims);
        if (!y) return cx->status;
        size_t chunk = (size_t)sizes[i] * inner;
        for (int64_t o = 0; o < outer; o++)
            memcpy((char *)y->data + (size_t)o * chunk,
                   (const char *)x->data + ((size_t)(o * len + start)) * inner, chunk);
        start += sizes[i];
        s->items[i] = y;
    }
    out[0] = s;
    return KN_OK;
}

/* ---- optionals ---- */

static kn_status infer_optional(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    const kn_attr *tp = kn_node_attr(n, "type");
    if (tp && tp->kind != KN_ATTR_TYPE_PROTO)
        return kn_diag(cx, n, KN_EINVAL, "attribute 'type' must be a type");
    const kn_tensor *x = n->nin > 0 ? in[0] : NULL;
    if (!x && !tp)
        return kn_diag(cx, n, KN_EINVAL, "an Optional without input needs the 'type' attribute");
    kn_type t = x ? x->type : tp->tp;
    if (t.kind == KN_KIND_OPTIONAL)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "optionals of optionals are not supported");
    out[0] = t;
    out[0].elem_kind = t.kind;
    out[0].kind = KN_KIND_OPTIONAL;
    return KN_OK;
}

static kn_status eval_optional(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                               kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_type ty = kn_type_unknown(KN_UNDEF);
    if (infer_optional(cx, n, in, &ty)) return cx->status;
    kn_tensor *o = kn_tensor_typed(kn_exec_arena(ex), &ty);
    o->items = kn_arena_alloc(kn_exec_arena(ex), sizeof *o->items);
    KN_ASSERT(o->items);
    o->nitems = n->nin > 0 && in[0] ? 1 : 0;
    o->items[0] = o->nitems ? in[0] : NULL;
    out[0] = o;
    return KN_OK;
}

static kn_status infer_optional_has_element(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                            kn_type *out) {
    (void)cx, (void)n, (void)in;
    out[0] = kn_type_scalar(KN_BOOL);
    return KN_OK;
}

static kn_status eval_optional_has_element(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                           kn_tensor **out) {
    (void)ex;
    const kn_tensor *x = n->nin > 0 ? in[0] : NULL;
    bool has = x && (x->type.kind != KN_KIND_OPTIONAL || (x->nitems > 0 && x->items[0]));
    kn_store_i64(out[0]->data, KN_BOOL, 0, has);
    return KN_OK;
}

static kn_status infer_optional_get_element(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                            kn_type *out) {
    if (!in[0]) return kn_diag(cx, n, KN_EINVAL, "input 0 is required");
    const kn_tensor *x = in[0];
    if (x->type.kind != KN_KIND_OPTIONAL) {
        out[0] = x->type;
        return KN_OK;
    }
    if (x->nitems == 0) return kn_diag(cx, n, KN_EINVAL, "the optional input is empty");
    if (x->nitems > 0 && x->items[0]) {
        out[0] = x->items[0]->type;
        return KN_OK;
    }
    out[0] = x->type;
    out[0].kind = x->type.elem_kind;
    out[0].elem_kind = KN_KIND_TENSOR;
    if (out[0].kind != KN_KIND_TENSOR) out[0] = shapeless(&out[0]);
    return KN_OK;
}

static kn_status eval_optional_get_element(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                           kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_tensor *x = in[0];
    if (x->type.kind != KN_KIND_OPTIONAL) return set_out(ex, n, out, 0, x);
    if (x->nitems < 1 || !x->items[0])
        return kn_diag(cx, n, KN_EINVAL, "the optional input is empty");
    return set_out(ex, n, out, 0, x->items[0]);
}

const kn_opimpl kn_ops_control[] = {
    {KN_OP_IF, infer_if, eval_if},
    {KN_OP_LOOP, infer_loop, eval_loop},
    {KN_OP_SCAN, infer_scan, eval_scan},
    {KN_OP_SEQUENCEMAP, infer_sequence_map, eval_sequence_map},
    {KN_OP_SEQUENCEEMPTY, infer_sequence_empty, eval_sequence_empty},
    {KN_OP_SEQUENCECONSTRUCT, infer_sequence_construct, eval_sequence_construct},
    {KN_OP_SEQUENCEINSERT, infer_sequence_insert, eval_sequence_insert},
    {KN_OP_SEQUENCEERASE, infer_sequence_erase, eval_sequence_erase},
    {KN_OP_SEQUENCEAT, infer_sequence_at, eval_sequence_at},
    {KN_OP_SEQUENCELENGTH, infer_sequence_length, eval_sequence_length},
    {KN_OP_CONCATFROMSEQUENCE, infer_concat_from_sequence, eval_concat_from_sequence},
    {KN_OP_SPLITTOSEQUENCE, infer_split_to_sequence, eval_split_to_sequence},
    {KN_OP_OPTIONAL, infer_optional, eval_optional},
    {KN_OP_OPTIONALHASELEMENT, infer_optional_has_element, eval_optional_has_element},
    {KN_OP_OPTIONALGETELEMENT, infer_optional_get_element, eval_optional_get_element},
    {KN_OP_COUNT, 0, 0},
};
