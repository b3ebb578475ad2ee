/* Transpose and Reshape chains cancelled.
 * requires: shape (static shapes; a node whose types are not static is left alone);
 * breaks: nothing (the graph stays valid and runnable).
 *
 * Exporters of NHWC models (tf2onnx) wrap every convolution in Transposes: NHWC ->
 * NCHW before it, back to NHWC after, then elementwise work in NHWC, then the next
 * Transpose. Each is a pass over memory. This pass removes them where the result is
 * the same, by three rewrites applied until none applies:
 *
 *   - merge:  Transpose(q) of Transpose(p) of x  ->  Transpose(p o q) of x, and
 *             Reshape of Reshape of x  ->  Reshape of x (the last shape; static);
 *   - drop:   a Transpose whose permutation is the identity, and a Reshape to the
 *             shape its input already has, are removed (their readers read the input;
 *             a graph output keeps its producer);
 *   - sink:   an elementwise node (unary, or binary/variadic whose other inputs are
 *             constants or Transposes with the same permutation) that alone reads a
 *             Transpose runs before it instead: op(T_p(x), c) -> T_p(op(x, c')) with
 *             the constant c' transposed by the inverse permutation at compile time;
 *             so does a Concat of such inputs, along the axis it names in x:
 *             Concat_k(T_p(x), T_p(y)) -> T_p(Concat_{p[k]}(x, y)); and a Resize
 *             (constant roi/scales/sizes, permuted) that does not grow the tensor or
 *             whose result only a Transpose inverting p reads.
 *
 * Sinking moves a Transpose down to the next one, where merge and drop cancel the
 * pair: Conv -> T -> Relu -> T' -> Conv becomes Conv -> Relu -> Conv. Nodes left
 * without readers are removed. Then, once nothing sinks:
 *
 *   - hoist:  a Transpose that could not sink (typically the model's NHWC output) moves
 *             up through a chain of single-reader elementwise nodes (other inputs
 *             constant, transposed at compile time) and Resizes (constant roi/scales/
 *             sizes permuted; only a Resize that does not shrink, so the Transpose
 *             copies the smaller tensor) to the producer that absorbs it: a Conv or pool
 *             whose output it moves channels-last (passes/layout.c then folds the pair) or a
 *             Transpose it inverts (merge and drop). Without such a producer it stays.
 *             Merge and drop run again, sinking does not (it would move it back). A
 *             chain of activations alone (kn_epilogue_step_of) above a Conv is not
 *             crossed: fuse puts them into the Conv's epilogue and passes/layout.c then
 *             folds the Transpose right after it, one kernel instead of two.
 *
 * A Transpose read by several nodes is split first when that lets it cancel: each
 * elementwise reader whose result only an inverse Transpose reads gets its own copy
 * (which sinks and cancels); the other readers must be Transposes (merge) or Convs and
 * pools (passes/layout.c folds it into them), or nothing is split.
 *
 * Transposes that remain still run as copies (passes/layout.c folds those next to a
 * Conv). Graphs read by subgraphs are handled: uses are counted across every graph of
 * the model. */
#include "ir/epilogue.h"
#include "ir/ops.h"
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>

typedef struct tp {
    kn_ctx *cx;
    kn_graph *root;
    int *uses; /* by value id: node inputs in any graph, graph outputs */
    int cap;   /* entries of uses; values the pass creates grow it (U) */
    bool changed;
    bool no_sink; /* after hoisting: merge and drop only (sinking would undo it) */
} tp;

/* The use count of v, growing the array for values created since it was counted. */
static int *U(tp *T, const kn_value *v) {
    if (v->id >= T->cap) {
        int nc = v->id + 64;
        T->uses = realloc(T->uses, (size_t)nc * sizeof *T->uses);
        KN_ASSERT(T->uses);
        memset(T->uses + T->cap, 0, (size_t)(nc - T->cap) * sizeof *T->uses);
        T->cap = nc;
    }
    return &T->uses[v->id];
}

static void count_uses(const kn_graph *g, int *uses) {
    for (int i = 0; i < g->nnodes; i++) {
        const kn_node *n = g->nodes[i];
        for (int k = 0; k < n->nin; k++)
            if (n->in[k]) uses[n->in[k]->id]++;
        for (int k = 0; k < n->nattr; k++) {
            if (n->attrs[k].kind == KN_ATTR_GRAPH) count_uses(n->attrs[k].g, uses);
            for (int j = 0; n->attrs[k].kind == KN_ATTR_GRAPHS && j < n->attrs[k].n; j++)
                count_uses(n->attrs[k].graphs[j], uses);
        }
    }
    for (int j = 0; j < g->nout; j++) uses[g->outputs[j]->id]++;
}

/* The permutation of Transpose n (rank r of its input, static) into p; false if the
 * node is not such a Transpose. */
static bool perm_of(const kn_node *n, int64_t *p, int *r) {
    if (n->op != KN_OP_TRANSPOSE || !n->in[0] || !n->out[0]) return false;
    const kn_type *t = &n->in[0]->type;
    if (t->kind != KN_KIND_TENSOR || !kn_type_static(t) || !kn_type_static(&n->out[0]->type))
        return false;
    *r = t->rank;
    const kn_attr *a = kn_node_attr(n, "perm");
    if (!a) { /* default: reversed */
        for (int d = 0; d < t->rank; d++) p[d] = t->rank - 1 - d;
        return true;
    }
    if (a->kind != KN_ATTR_INTS || a->n != t->rank) return false;
    for (int d = 0; d < t->rank; d++) p[d] = a->ints[d];
    return true;
}

static void set_perm(kn_graph *g, kn_node *n, const int64_t *p, int r) {
    kn_attr *a = kn_arena_array(g->arena, 1, sizeof *a);
    int64_t *v = kn_arena_array(g->arena, (size_t)r + 1, sizeof *v);
    KN_ASSERT(a && v);
    memcpy(v, p, (size_t)r * sizeof *v);
    *a = (kn_attr){.name = "perm", .kind = KN_ATTR_INTS, .n = r, .ints = v};
    n->attrs = a;
    n->nattr = 1;
}

/* Whether passes/layout.c may fold a channels-first/last Transpose next to an op's node
 * into it (a Conv or a pool; it checks the node itself). */
static bool folds_edges(kn_op op) {
    return op == KN_OP_CONV || op == KN_OP_MAXPOOL || op == KN_OP_AVERAGEPOOL ||
           op == KN_OP_LPPOOL || op == KN_OP_GLOBALMAXPOOL || op == KN_OP_GLOBALAVERAGEPOOL ||
           op == KN_OP_GLOBALLPPOOL;
}

static bool is_identity(const int64_t *p, int r) {
    for (int d = 0; d < r; d++)
        if (p[d] != d) return false;
    return true;
}

/* Makes the readers of n's output read `to` instead and marks n dead (no outputs
 * read). A graph output is never redirected: then n stays. */
static bool bypass(tp *T, kn_node *n, kn_value *to) {
    kn_value *y = n->out[0];
    if (kn_graph_is_output(T->root, y) || y->type.dtype != to->type.dtype) return false;
    (*U(T, to)) += (*U(T, y));
    (*U(T, y)) = 0;
    kn_graph_replace_uses(T->root, y, to);
    T->changed = true;
    return true;
}

/* c (a constant broadcastable to rank r) as the constant c' with T_p(c') == c in
 * broadcasting: padded to rank r with leading 1s, then transposed by p's inverse. */
static kn_value *untranspose_const(tp *T, kn_graph *g, const kn_value *c, const int64_t *p, int r) {
    const kn_tensor *t = c->constant;
    int cr = t->type.rank;
    if (cr > r || t->type.kind != KN_KIND_TENSOR) return NULL;
    int64_t pd[KN_MAX_RANK], od[KN_MAX_RANK], os[KN_MAX_RANK], ps[KN_MAX_RANK];
    for (int d = 0; d < r; d++) pd[d] = d < r - cr ? 1 : t->type.dims[d - (r - cr)];
    for (int d = 0; d < r; d++) od[p[d]] = pd[d]; /* c'.dims[p[d]] = c.dims[d] */
    kn_tensor *o = kn_tensor_make(g->arena, t->type.dtype, r, od);
    if (!o) return NULL;
    kn_strides(r, od, os);
    kn_strides(r, pd, ps);
    size_t es = kn_elem_size(t->type.dtype);
    int64_t numel = kn_tensor_numel(o);
    for (int64_t i = 0; i < numel; i++) { /* i indexes c (padded): element at p-moved dims */
        int64_t rem = i, at = 0;
        for (int d = 0; d < r; d++) {
            int64_t idx = rem / ps[d];
            rem %= ps[d];
            at += idx * os[p[d]];
        }
        kn_copy_elem(o->data, at, t->data, i, es);
    }
    kn_value *v = kn_graph_add_value(g, c->name, &o->type);
    v->constant = o;
    (void)T;
    return v;
}

/* Constant operand c of elementwise node u for u moved across a Transpose: a
 * QuantizeLinear's or DequantizeLinear's per-tensor scale or zero point stays as it is
 * (those must stay scalars; one element broadcasts alike in any order); any other
 * constant as untranspose_const makes it. */
static kn_value *operand_const(tp *T, kn_graph *g, const kn_node *u, const kn_value *c,
                               const int64_t *p, int r) {
    if ((u->op == KN_OP_QUANTIZELINEAR || u->op == KN_OP_DEQUANTIZELINEAR) &&
        c->constant->type.rank <= 1 && kn_tensor_numel(c->constant) == 1)
        return (kn_value *)c;
    return untranspose_const(T, g, c, p, r);
}

static kn_value *permute_param(kn_graph *g, const kn_value *c, const int64_t *p, int r);
static int reader(const kn_graph *g, const kn_value *v, int from);

/* Whether Transpose t (perm p) may sink through Resize u: opset >= 11 without `axes`,
 * t's value its data input only, and either u does not grow the tensor or its result
 * goes only to a Transpose that inverts p (then the pair cancels). */
static bool resize_sinks(tp *T, const kn_graph *g, const kn_node *t, const kn_node *u,
                         const int64_t *p, int r) {
    if (u->opset < 11 || kn_node_attr(u, "axes") || u->nin < 1 || u->in[0] != t->out[0])
        return false;
    for (int k = 1; k < u->nin; k++)
        if (u->in[k] &&
            (u->in[k] == t->out[0] || !u->in[k]->constant || !kn_type_static(&u->in[k]->type)))
            return false;
    if (kn_type_numel(&u->out[0]->type) <= kn_type_numel(&u->in[0]->type)) return true;
    if ((*U(T, u->out[0])) != 1 || kn_graph_is_output(T->root, u->out[0])) return false;
    int w = reader(g, u->out[0], 0);
    int64_t q[KN_MAX_RANK];
    int qr;
    if (w < 0 || !perm_of(g->nodes[w], q, &qr) || qr != r) return false;
    for (int d = 0; d < r; d++)
        if (p[q[d]] != d) return false;
    return true;
}

/* The sink rewrite for Transpose t (perm p, rank r) whose output only u reads. */
static bool sink(tp *T, kn_graph *g, int ti, int ui, const int64_t *p, int r) {
    kn_node *t = g->nodes[ti], *u = g->nodes[ui];
    const kn_opdesc *d = kn_op_desc(u->op);
    bool concat = u->op == KN_OP_CONCAT, resize = u->op == KN_OP_RESIZE;
    if (!(d->flags & OPF_ELEMWISE) && !concat && !resize) return false;
    if (resize && (!u->out[0] || !kn_type_static(&u->out[0]->type) || u->out[0]->type.rank != r ||
                   !resize_sinks(T, g, t, u, p, r)))
        return false;
    int64_t inv[KN_MAX_RANK]; /* Resize's per-axis parameters for the untransposed input */
    for (int dd = 0; dd < r; dd++) inv[p[dd]] = dd;
    if (u->nout != 1 || !u->out[0] || kn_node_attr(u, KN_ATTR_EPILOGUE) ||
        (d->flags & OPF_SUBGRAPH) || !kn_type_static(&u->out[0]->type) ||
        u->out[0]->type.rank != r || (!concat && kn_node_attr(u, "axis"))) /* per-axis */
        return false;
    /* Concat along axis k of T_p(x)s is T_p of the Concat along p[k] of the xs */
    const kn_attr *ax = concat ? kn_node_attr(u, "axis") : NULL;
    if (concat && (!ax || ax->kind != KN_ATTR_INT || u->nattr != 1 || ax->i < -r || ax->i >= r))
        return false;
    /* every input: the value t makes, a constant, or another Transpose(p) read only by u */
    kn_value *src[256];
    if (u->nin > 256) return false;
    for (int k = 0; k < u->nin; k++) {
        kn_value *v = u->in[k];
        src[k] = NULL;
        if (!v) continue;
        int64_t q[KN_MAX_RANK];
        int qr;
        if (resize && k > 0) { /* roi, scales, sizes: constants (resize_sinks) */
            if (!(src[k] = permute_param(g, v, inv, r))) return false;
        } else if (v == t->out[0]) {
            src[k] = t->in[0];
        } else if (v->producer && perm_of(v->producer, q, &qr) && qr == r &&
                   !memcmp(q, p, (size_t)r * sizeof *q) && (*U(T, v)) == 1 &&
                   v->producer->graph == g) {
            src[k] = v->producer->in[0];
        } else if (v->constant && kn_type_static(&v->type) && v->type.rank <= r &&
                   (!concat || v->type.rank == r)) {
            if (!(src[k] = operand_const(T, g, u, v, p, r))) return false;
        } else {
            return false;
        }
    }
    /* u reads the sources and writes t's old output value (retyped); t then reads it
     * and writes u's old output, placed right after u (u's other sources may be
     * defined between t and u; nothing but u read t's output) */
    kn_value *y = t->out[0], *z = u->out[0];
    if (concat) {
        kn_attr *a = kn_arena_array(g->arena, 1, sizeof *a);
        KN_ASSERT(a);
        *a = *ax;
        a->i = p[ax->i < 0 ? ax->i + r : ax->i];
        u->attrs = a;
    }
    for (int k = 0; k < u->nin; k++)
        if (u->in[k]) {
            if (u->in[k] != y) (*U(T, u->in[k]))--;
            u->in[k] = src[k];
            (*U(T, src[k]))++;
        }
    (*U(T, t->in[0]))--;
    kn_type yt = z->type;
    for (int dd = 0; dd < r; dd++) yt.dims[p[dd]] = z->type.dims[dd], yt.sym[p[dd]] = NULL;
    y->type = yt;
    u->out[0] = y;
    y->producer = u;
    t->in[0] = y;
    (*U(T, y)) = 1;
    t->out[0] = z;
    z->producer = t;
    memmove(&g->nodes[ti], &g->nodes[ti + 1], (size_t)(ui - ti) * sizeof *g->nodes);
    g->nodes[ui] = t;
    T->changed = true;
    return true;
}

/* The node at or after `from` that reads v, or -1. */
static int reader(const kn_graph *g, const kn_value *v, int from) {
    for (int i = from; i < g->nnodes; i++)
        for (int k = 0; k < g->nodes[i]->nin; k++)
            if (g->nodes[i]->in[k] == v) return i;
    return -1;
}

/* Whether Transpose t (perm p) cancels when reader u has a copy of its own: u is an
 * elementwise node reading t once, whose other inputs are constants and whose output
 * only a Transpose inverting p reads (sink, then merge and drop, remove both). */
static bool cancels_through(tp *T, const kn_graph *g, const kn_node *t, const kn_node *u,
                            const int64_t *p, int r) {
    const kn_opdesc *d = kn_op_desc(u->op);
    if (!(d->flags & OPF_ELEMWISE) || (d->flags & OPF_SUBGRAPH) || u->nout != 1 || !u->out[0] ||
        kn_node_attr(u, "axis") || kn_node_attr(u, KN_ATTR_EPILOGUE) || (*U(T, u->out[0])) != 1 ||
        kn_graph_is_output(T->root, u->out[0]))
        return false;
    int reads = 0;
    for (int k = 0; k < u->nin; k++) {
        if (!u->in[k]) continue;
        if (u->in[k] == t->out[0])
            reads++;
        else if (!u->in[k]->constant || u->in[k]->type.rank > r)
            return false;
    }
    int w = reader(g, u->out[0], 0);
    int64_t q[KN_MAX_RANK];
    int qr;
    if (reads != 1 || w < 0 || !perm_of(g->nodes[w], q, &qr) || qr != r) return false;
    for (int dd = 0; dd < r; dd++)
        if (p[q[dd]] != dd) return false;
    return true;
}

/* Transpose n (node i, perm p) read by several nodes: each elementwise reader through
 * which it would cancel (cancels_through) gets its own copy, placed right before it,
 * which then sinks; other readers (Transposes, which merge anyway; Convs, which the
 * layout pass folds it into) keep n. Only when every reader is one of these. */
static void split(tp *T, kn_graph *g, int i, const int64_t *p, int r) {
    kn_node *n = g->nodes[i];
    kn_value *y = n->out[0];
    int found = 0, split_n = 0;
    for (int j = i + 1; j < g->nnodes; j++) {
        kn_node *u = g->nodes[j];
        int reads = 0;
        for (int k = 0; k < u->nin; k++) reads += u->in[k] == y;
        if (!reads) continue;
        found += reads;
        int64_t q[KN_MAX_RANK];
        int qr;
        if (cancels_through(T, g, n, u, p, r))
            split_n++;
        else if (!(perm_of(u, q, &qr) && qr == r) && !folds_edges(u->op))
            return;
    }
    if (found != (*U(T, y)) || split_n == 0) return; /* readers elsewhere, or no gain */
    for (int j = i + 1; j < g->nnodes; j++) {
        kn_node *u = g->nodes[j];
        if (u->op == KN_OP_TRANSPOSE || folds_edges(u->op)) continue;
        int k = -1;
        for (int kk = 0; kk < u->nin; kk++)
            if (u->in[kk] == y) k = kk;
        if (k < 0) continue;
        kn_value *c = kn_graph_add_value(g, y->name, &y->type);
        kn_value *x = n->in[0];
        kn_node *t = kn_graph_add_node(g, KN_OP_TRANSPOSE, n->name, 1, &x, 1, &c);
        set_perm(g, t, p, r);
        memmove(&g->nodes[j + 1], &g->nodes[j], (size_t)(g->nnodes - 1 - j) * sizeof *g->nodes);
        g->nodes[j] = t;
        j++; /* u moved to j + 1 */
        u->in[k] = c;
        (*U(T, c)) = 1;
        (*U(T, x))++;
        (*U(T, y))--;
        T->changed = true;
    }
    for (int j = 0; j < g->nnodes; j++) g->nodes[j]->id = j;
}

static void rewrite(tp *T, kn_graph *g) {
    for (int i = 0; i < g->nnodes; i++) {
        kn_node *n = g->nodes[i];
        int64_t p[KN_MAX_RANK], q[KN_MAX_RANK];
        int r, qr;
        if (perm_of(n, p, &r)) {
            kn_node *m = n->in[0]->producer;
            if (m && m->graph == g && perm_of(m, q, &qr) && qr == r) { /* merge */
                int64_t c[KN_MAX_RANK];
                for (int d = 0; d < r; d++) c[d] = q[p[d]];
                (*U(T, n->in[0]))--;
                n->in[0] = m->in[0];
                (*U(T, n->in[0]))++;
                set_perm(g, n, c, r);
                memcpy(p, c, sizeof c);
                T->changed = true;
            }
            if (is_identity(p, r) && bypass(T, n, n->in[0])) continue; /* drop */
            if ((*U(T, n->out[0])) == 1 && !kn_graph_is_output(T->root, n->out[0])) {
                int u = reader(g, n->out[0], i + 1);
                if (u > i && !T->no_sink) sink(T, g, i, u, p, r);
            } else if ((*U(T, n->out[0])) > 1 && !kn_graph_is_output(T->root, n->out[0]) &&
                       !T->no_sink) {
                split(T, g, i, p, r);
            }
            continue;
        }
        if (n->op == KN_OP_RESHAPE && n->in[0] && n->out[0] && kn_type_static(&n->out[0]->type)) {
            kn_node *m = n->in[0]->producer;
            bool zero = false; /* a 0 in a shape means "copy that dim" unless allowzero */
            for (int d = 0; d < n->out[0]->type.rank; d++) zero |= n->out[0]->type.dims[d] == 0;
            if (m && m->graph == g && m->op == KN_OP_RESHAPE && m->in[0] && !zero &&
                kn_type_static(&m->in[0]->type) && n->in[1] && n->in[1]->constant) {
                /* the last Reshape's target is static: a constant shape of its output
                 * dims (a 0 or -1 in the original could refer to the middle shape) */
                const kn_type *ot = &n->out[0]->type;
                int64_t one = ot->rank;
                kn_tensor *s = kn_tensor_make(g->arena, KN_I64, 1, &one);
                KN_ASSERT(s);
                memcpy(s->data, ot->dims, (size_t)ot->rank * sizeof(int64_t));
                kn_value *sv = kn_graph_add_value(g, n->in[1]->name, &s->type);
                sv->constant = s;
                (*U(T, n->in[0]))--;
                (*U(T, n->in[1]))--;
                n->in[0] = m->in[0];
                n->in[1] = sv;
                (*U(T, m->in[0]))++;
                (*U(T, sv))++;
                T->changed = true;
            }
            const kn_type *it = &n->in[0]->type;
            if (kn_type_static(it) && kn_type_equal(it, &n->out[0]->type)) bypass(T, n, n->in[0]);
        }
    }
}

/* Removes nodes of g none of whose outputs is read (pure ops only). */
static void drop_dead(tp *T, kn_graph *g) {
    for (int i = g->nnodes; i-- > 0;) {
        kn_node *n = g->nodes[i];
        const kn_opdesc *d = kn_op_desc(n->op);
        if (d->flags & (OPF_RANDOM | OPF_SUBGRAPH)) continue;
        bool live = false;
        for (int j = 0; j < n->nout && !live; j++) live = n->out[j] && (*U(T, n->out[j])) > 0;
        if (live) continue;
        for (int k = 0; k < n->nin; k++)
            if (n->in[k]) (*U(T, n->in[k]))--;
        for (int j = 0; j < n->nout; j++)
            if (n->out[j] && n->out[j]->producer == n) n->out[j]->producer = NULL;
        memmove(&g->nodes[i], &g->nodes[i + 1], (size_t)(g->nnodes - i - 1) * sizeof *g->nodes);
        g->nnodes--;
    }
    for (int i = 0; i < g->nnodes; i++) g->nodes[i]->id = i;
}

/* ---- hoisting an output-side Transpose ---- */

/* Whether Transpose of perm p (rank r) moves from after u to before it: u is an
 * elementwise op whose inputs but the chain's (k) are constants of rank <= r, or a
 * Resize (opset >= 11, no `axes`) with constant roi/scales/sizes that does not shrink
 * (the Transpose then copies the smaller tensor); one output, no fused epilogue. */
static bool hoistable(const kn_node *u, int k, int r) {
    const kn_opdesc *d = kn_op_desc(u->op);
    if (u->nout != 1 || !u->out[0] || kn_node_attr(u, KN_ATTR_EPILOGUE) ||
        !kn_type_static(&u->out[0]->type) || u->out[0]->type.rank != r)
        return false;
    if (u->op == KN_OP_RESIZE) {
        if (u->opset < 11 || k != 0 || kn_node_attr(u, "axes") ||
            kn_type_numel(&u->in[0]->type) > kn_type_numel(&u->out[0]->type))
            return false;
        for (int j = 1; j < u->nin; j++)
            if (u->in[j] && !(u->in[j]->constant && kn_type_static(&u->in[j]->type))) return false;
        return true;
    }
    if (!(d->flags & OPF_ELEMWISE) || (d->flags & OPF_SUBGRAPH) || kn_node_attr(u, "axis"))
        return false;
    for (int j = 0; j < u->nin; j++)
        if (j != k && u->in[j] &&
            !(u->in[j]->constant && kn_type_static(&u->in[j]->type) && u->in[j]->type.rank <= r))
            return false;
    return true;
}

/* Resize's per-axis constant c (scales or sizes: r entries; roi: 2r) permuted for a
 * Resize that reads T_p(x): entry d of each half moves to where T_p puts axis p[d]...
 * i.e. c'[d] = c[p[d]] for the Resize of the transposed tensor. NULL if not r or 2r. */
static kn_value *permute_param(kn_graph *g, const kn_value *c, const int64_t *p, int r) {
    const kn_tensor *t = c->constant;
    int64_t n = kn_tensor_numel(t);
    if (t->type.rank != 1 || (n != r && n != 2 * r)) return n == 0 ? (kn_value *)c : NULL;
    kn_tensor *o = kn_tensor_make(g->arena, t->type.dtype, 1, &n);
    if (!o) return NULL;
    size_t es = kn_elem_size(t->type.dtype);
    for (int64_t h = 0; h < n; h += r)
        for (int d = 0; d < r; d++) kn_copy_elem(o->data, h + d, t->data, h + p[d], es);
    kn_value *v = kn_graph_add_value(g, c->name, &o->type);
    v->constant = o;
    return v;
}

/* Whether value v's producer absorbs a Transpose of perm p placed right after it: a
 * Conv writing channels-first when p moves channels last (passes/layout.c folds the
 * pair), or a Transpose that p inverts (merge then drops both). */
static bool absorbs(const kn_value *v, const int64_t *p, int r) {
    const kn_node *m = v->producer;
    if (!m) return false;
    int64_t q[KN_MAX_RANK];
    int qr;
    if (perm_of(m, q, &qr) && qr == r) {
        for (int d = 0; d < r; d++)
            if (q[p[d]] != d) return false;
        return true;
    }
    if (!folds_edges(m->op) || r < 3 || p[0] != 0 || p[r - 1] != 1) return false;
    for (int d = 1; d < r - 1; d++)
        if (p[d] != d + 1) return false;
    return true;
}

/* Moves Transpose t (node ti, perm p) up through the chain of single-reader nodes
 * above it to the producer that absorbs it; false if there is none. The chain's
 * values get transposed types; the last node writes t's old output value. */
static bool hoist(tp *T, kn_graph *g, int ti, const int64_t *p, int r) {
    kn_node *t = g->nodes[ti];
    kn_node *chain[16];
    int slot[16], nc = 0;
    kn_value *v = t->in[0];
    while (nc < 16) {
        if (absorbs(v, p, r) && nc > 0) break;
        kn_node *u = v->producer;
        if (!u || u->graph != g || (*U(T, v)) != 1 || kn_graph_is_output(T->root, v)) return false;
        int k = -1;
        for (int j = 0; j < u->nin; j++)
            if (u->in[j] && !u->in[j]->constant && k < 0) k = j;
        if (k < 0 || !hoistable(u, k, r) || !u->in[k] || u->in[k]->type.rank != r) return false;
        slot[nc] = k;
        chain[nc++] = u;
        v = u->in[k];
    }
    if (nc == 0 || nc == 16 || (*U(T, v)) != 1 || kn_graph_is_output(T->root, v)) return false;
    if (v->producer->op == KN_OP_CONV) { /* activations only: fuse takes them into the */
        bool acts = true;                /* Conv, then layout folds the Transpose after it */
        for (int c = 0; c < nc && acts; c++) {
            kn_epi_step s;
            acts = kn_epilogue_step_of(T->cx, chain[c], &s);
        }
        if (acts) return false;
    }
    int64_t inv[KN_MAX_RANK];
    for (int d = 0; d < r; d++) inv[p[d]] = d;
    /* the new constants first: nothing changes if one cannot be made */
    kn_value *nv[16][8] = {{0}};
    for (int c = 0; c < nc; c++) {
        kn_node *u = chain[c];
        if (u->nin > 8) return false;
        for (int j = 0; j < u->nin; j++) {
            if (j == slot[c] || !u->in[j]) continue;
            nv[c][j] = u->op == KN_OP_RESIZE ? permute_param(g, u->in[j], p, r)
                                             : operand_const(T, g, u, u->in[j], inv, r);
            if (!nv[c][j]) return false;
        }
    }
    kn_value *z = t->out[0], *top = v, *y = t->in[0]; /* top: what the chain reads */
    kn_node *first = chain[nc - 1], *last = chain[0];
    for (int c = 0; c < nc; c++)
        for (int j = 0; j < chain[c]->nin; j++)
            if (nv[c][j] && nv[c][j] != chain[c]->in[j]) {
                (*U(T, chain[c]->in[j]))--;
                chain[c]->in[j] = nv[c][j];
                (*U(T, nv[c][j]))++;
            }
    /* the chain's inner values become their transposed selves; the last node writes
     * z (which is T_p of its old output) and its old output y is left unread */
    for (int c = 1; c < nc; c++) {
        kn_value *o = chain[c]->out[0];
        kn_type ot = o->type;
        for (int d = 0; d < r; d++) ot.dims[d] = o->type.dims[p[d]], ot.sym[d] = o->type.sym[p[d]];
        o->type = ot;
    }
    kn_type tt = top->type;
    for (int d = 0; d < r; d++) tt.dims[d] = top->type.dims[p[d]], tt.sym[d] = top->type.sym[p[d]];
    kn_value *tv = kn_graph_add_value(g, t->name, &tt); /* named after the node */
    (*U(T, y))--;
    y->producer = NULL;
    t->in[0] = top;
    t->out[0] = tv;
    tv->producer = t;
    (*U(T, tv)) = 1;
    first->in[slot[nc - 1]] = tv;
    last->out[0] = z;
    z->producer = last;
    /* order: t right before the chain's first node */
    int fi = -1;
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i] == first) fi = i;
    KN_ASSERT(fi >= 0 && fi < ti);
    memmove(&g->nodes[fi + 1], &g->nodes[fi], (size_t)(ti - fi) * sizeof *g->nodes);
    g->nodes[fi] = t;
    T->changed = true;
    return true;
}

/* Whether permutation p (rank r) of a tensor of the given dims keeps the axes of extent
 * above 1 in their order: it then moves only axes of extent 1, and the elements stay in
 * the same order (a Reshape). */
static bool moves_ones(const int64_t *p, int r, const int64_t *dims) {
    int64_t last = -1;
    for (int d = 0; d < r; d++) {
        if (dims[p[d]] == 1) continue;
        if (p[d] < last) return false;
        last = p[d];
    }
    return true;
}

/* Transpose n of node index i, moving only axes of extent 1, becomes a Reshape to its
 * output's shape (a copy in order, which passes/plan.c may then drop, and which merges
 * with a Reshape next to it): PyTorch's batch_first encoder transposes [1, S, E] to
 * [S, 1, E] and back around its attention. Not next to a node passes/layout.c folds
 * channels-first/last Transposes into. */
static void to_reshape(tp *T, kn_graph *g, int i) {
    kn_node *n = g->nodes[i];
    int64_t p[KN_MAX_RANK];
    int r;
    /* Reshape takes its shape as an input from opset 5; a 0 in it would mean "keep that
     * dim", so empty tensors stay Transposes */
    if (n->opset < 5 || !perm_of(n, p, &r) || is_identity(p, r) ||
        !moves_ones(p, r, n->in[0]->type.dims))
        return;
    for (int d = 0; d < r; d++)
        if (n->in[0]->type.dims[d] == 0) return;
    if (n->in[0]->producer && folds_edges(n->in[0]->producer->op)) return;
    for (int u = reader(g, n->out[0], 0); u >= 0; u = reader(g, n->out[0], u + 1))
        if (folds_edges(g->nodes[u]->op)) return;
    const kn_type *ot = &n->out[0]->type;
    int64_t rank = ot->rank;
    kn_tensor *sh = kn_tensor_make(g->arena, KN_I64, 1, &rank);
    kn_value **in = kn_arena_array(g->arena, 2, sizeof *in);
    KN_ASSERT(sh && in);
    memcpy(sh->data, ot->dims, (size_t)ot->rank * sizeof(int64_t));
    const char *on = n->out[0]->name ? n->out[0]->name : "";
    char *name = kn_arena_array(g->arena, strlen(on) + 7, 1);
    KN_ASSERT(name);
    memcpy(name, on, strlen(on));
    memcpy(name + strlen(on), "_shape", 7);
    kn_value *sv = kn_graph_add_value(g, name, &sh->type);
    KN_ASSERT(sv);
    sv->constant = sh;
    in[0] = n->in[0];
    in[1] = sv;
    (*U(T, sv))++;
    n->op = KN_OP_RESHAPE;
    n->op_type = "Reshape";
    n->in = in;
    n->nin = 2;
    n->attrs = NULL;
    n->nattr = 0;
    T->changed = true;
}

static bool has_candidates(const kn_graph *g) {
    for (int i = 0; i < g->nnodes; i++)
        if (g->nodes[i]->op == KN_OP_TRANSPOSE || g->nodes[i]->op == KN_OP_RESHAPE) return true;
    return false;
}

kn_status kn_pass_transpose(kn_ctx *cx, kn_graph *g) {
    if (!has_candidates(g)) return KN_OK;
    tp T = {.cx = cx, .root = g->root};
    T.cap = kn_graph_value_count(g) + 1;
    T.uses = calloc((size_t)T.cap, sizeof *T.uses);
    KN_ASSERT(T.uses);
    count_uses(g->root, T.uses);
    bool any = false;
    for (int round = 0; round < 64; round++) { /* each round moves Transposes down */
        T.changed = false;
        rewrite(&T, g);
        if (!T.changed) break;
        any = true;
    }
    /* the Transposes that could not sink: up to a producer that absorbs them (dead
     * readers, such as folded Shapes, first out of the use counts) */
    drop_dead(&T, g);
    T.changed = false;
    for (int i = 0; i < g->nnodes; i++) {
        int64_t p[KN_MAX_RANK];
        int r;
        if (perm_of(g->nodes[i], p, &r)) hoist(&T, g, i, p, r);
    }
    /* what still moves only axes of extent 1 is a Reshape */
    for (int i = 0; i < g->nnodes; i++) to_reshape(&T, g, i);
    if (T.changed) {
        any = true;
        T.no_sink = true;
        for (int round = 0; round < 64; round++) {
            T.changed = false;
            rewrite(&T, g);
            if (!T.changed) break;
        }
    }
    if (any) drop_dead(&T, g);
    free(T.uses);
    return KN_OK;
}
