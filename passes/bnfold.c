/* BatchNormalization folded into the weights of the node producing its input, or
 * turned into a per-channel Mul and Add.
 * requires: shape; breaks: nothing (the graph stays valid and runnable).
 *
 * An inference BatchNormalization (training_mode 0, spatial, constant scale, bias,
 * mean and var, only output Y read) computes y = x * k + c per channel, with
 * k = scale / sqrt(var + epsilon) and c = bias - mean * k (in double, rounded once).
 *
 *  - fold: when x is read by the BatchNormalization alone and comes from a Conv,
 *    ConvTranspose or Gemm with constant weights (and constant bias, if any) and no
 *    epilogue yet, the weights of output channel o are scaled by k[o] and the bias
 *    becomes bias[o] * k[o] + c[o]; the producer then writes y. For a Gemm the channel
 *    is the column: B's column o is scaled (alpha kept) and C becomes a row [N]
 *    (beta C * k + c, beta 1); a C that varies by row is left alone.
 *  - otherwise: y = Add(Mul(x, k), c) with k and c shaped [C, 1, ...] to broadcast
 *    over the channel axis, so the fuse and chain passes can put the two steps into
 *    an epilogue or one loop with their neighbours.
 *
 * New weights are new constants: an initializer shared with another node keeps its
 * value. */
#include "ir/epilogue.h"
#include "ir/ops.h"
#include "ir/ops/nn_norm_attrs.h"
#include "passes/pass.h"
#include "passes/rewrite.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* k and c of BatchNormalization n (C channels) into arrays of the graph arena; false if
 * n is not a foldable inference BatchNormalization. */
static bool bn_coefs(kn_ctx *cx, const kn_rw *rw, const kn_node *n, double **k, double **c,
                     int64_t *nc) {
    kn_ctx scratch;
    kn_ctx_init(&scratch, cx->file);
    if (n->nin != 5 || !kn_float_static(n->in[0]) || n->in[0]->type.rank < 2 || !n->out[0])
        return false;
    for (int j = 1; j < n->nout; j++)
        if (n->out[j] && kn_rw_uses(rw, n->out[j])) return false;
    if (kn_bn_training(&scratch, n) ||
        (n->opset < 9 && kn_attr_int(&scratch, n, "spatial", 1) != 1))
        return false;
    double eps = kn_attr_float(&scratch, n, "epsilon", 1e-5f);
    if (kn_failed(&scratch)) return false;
    int64_t C = n->in[0]->type.dims[1];
    for (int i = 1; i < 5; i++)
        if (!n->in[i] || !n->in[i]->constant || kn_tensor_numel(n->in[i]->constant) != C ||
            !kn_dtype_get(n->in[i]->type.dtype)->is_float)
            return false;
    *k = kn_arena_array(rw->g->arena, (size_t)C + 1, sizeof **k);
    *c = kn_arena_array(rw->g->arena, (size_t)C + 1, sizeof **c);
    KN_ASSERT(*k && *c);
    for (int64_t o = 0; o < C; o++) {
        double scale = kn_tensor_get_f64(n->in[1]->constant, o);
        double bias = kn_tensor_get_f64(n->in[2]->constant, o);
        double mean = kn_tensor_get_f64(n->in[3]->constant, o);
        double var = kn_tensor_get_f64(n->in[4]->constant, o);
        (*k)[o] = scale / sqrt(var + eps);
        (*c)[o] = bias - mean * (*k)[o];
    }
    *nc = C;
    return true;
}

static kn_tensor *copy_of(kn_graph *g, const kn_tensor *t) {
    kn_tensor *o = kn_tensor_clone(g->arena, t);
    KN_ASSERT(o);
    return o;
}

/* The Conv/ConvTranspose h's weights and bias scaled for BatchNormalization (k, c). */
static bool fold_conv(kn_rw *rw, kn_node *h, const double *k, const double *c, int64_t C) {
    kn_graph *g = rw->g;
    kn_ctx scratch;
    kn_ctx_init(&scratch, rw->cx->file);
    const kn_value *w = h->in[1], *b = h->nin > 2 ? h->in[2] : NULL;
    if (!w || !w->constant || w->type.rank < 2 || (b && !b->constant) ||
        w->type.dtype != h->out[0]->type.dtype)
        return false;
    int64_t group = kn_attr_int(&scratch, h, "group", 1);
    if (kn_failed(&scratch) || group < 1) return false;
    kn_tensor *W = copy_of(g, w->constant);
    int64_t d0 = W->type.dims[0], d1 = W->type.dims[1], inner = kn_tensor_numel(W) / (d0 * d1);
    bool transposed = h->op == KN_OP_CONVTRANSPOSE;
    if ((transposed ? d1 * group : d0) != C || (transposed && d0 % group)) return false;
    for (int64_t i = 0; i < d0; i++)
        for (int64_t j = 0; j < d1; j++) {
            /* Conv: W[o, ci/g, ...]; ConvTranspose: W[ci, o%(O/g), ...], o's group
             * that of ci */
            int64_t o = transposed ? (i / (d0 / group)) * d1 + j : i;
            for (int64_t e = 0; e < inner; e++) {
                int64_t at = (i * d1 + j) * inner + e;
                kn_tensor_set_f64(W, at, kn_tensor_get_f64(W, at) * k[o]);
            }
        }
    kn_tensor *B = kn_tensor_make(g->arena, W->type.dtype, 1, &C);
    KN_ASSERT(B);
    for (int64_t o = 0; o < C; o++)
        kn_tensor_set_f64(B, o, (b ? kn_tensor_get_f64(b->constant, o) * k[o] : 0) + c[o]);
    kn_value **in = kn_arena_array(g->arena, 3, sizeof *in);
    KN_ASSERT(in);
    in[0] = h->in[0];
    in[1] = kn_rw_const(rw, w->name, "bn", W);
    in[2] = kn_rw_const(rw, b ? b->name : w->name, "bnbias", B);
    h->in = in;
    h->nin = 3;
    return true;
}

/* The Gemm h's B and C scaled for BatchNormalization (k, c) over its N columns. */
static bool fold_gemm(kn_rw *rw, kn_node *h, const double *k, const double *c, int64_t N) {
    kn_graph *g = rw->g;
    kn_ctx scratch;
    kn_ctx_init(&scratch, rw->cx->file);
    const kn_value *bv = h->in[1], *cv = h->nin > 2 ? h->in[2] : NULL;
    int64_t transB = kn_attr_int(&scratch, h, "transB", 0);
    double beta = kn_attr_float(&scratch, h, "beta", 1.0f);
    if (kn_failed(&scratch) || !bv || !bv->constant || bv->type.rank != 2 ||
        (cv && !cv->constant) || bv->type.dtype != h->out[0]->type.dtype)
        return false;
    int64_t cn = cv ? kn_tensor_numel(cv->constant) : 0;
    if (cv && !(cn == 1 || (cn == N && cv->type.dims[cv->type.rank - 1] == N))) return false;
    kn_tensor *B = copy_of(g, bv->constant);
    int64_t rows = B->type.dims[0], cols = B->type.dims[1];
    if ((transB ? rows : cols) != N) return false;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t q = 0; q < cols; q++)
            kn_tensor_set_f64(B, r * cols + q,
                              kn_tensor_get_f64(B, r * cols + q) * k[transB ? r : q]);
    kn_tensor *Cn = kn_tensor_make(g->arena, B->type.dtype, 1, &N);
    KN_ASSERT(Cn);
    for (int64_t o = 0; o < N; o++) {
        double c0 = cv ? beta * kn_tensor_get_f64(cv->constant, cn == 1 ? 0 : o) : 0;
        kn_tensor_set_f64(Cn, o, c0 * k[o] + c[o]);
    }
    kn_value **in = kn_arena_array(g->arena, 3, sizeof *in);
    kn_attr *at = kn_arena_array(g->arena, (size_t)h->nattr + 1, sizeof *at);
    KN_ASSERT(in && at);
    in[0] = h->in[0];
    in[1] = kn_rw_const(rw, bv->name, "bn", B);
    in[2] = kn_rw_const(rw, cv ? cv->name : bv->name, "bnbias", Cn);
    int na = 0;
    for (int i = 0; i < h->nattr; i++)
        if (strcmp(h->attrs[i].name, "beta")) at[na++] = h->attrs[i];
    h->attrs = at;
    h->nattr = na;
    h->in = in;
    h->nin = 3;
    return true;
}

/* Folds BatchNormalization n into its input's producer; true if it did. */
static bool fold(kn_rw *rw, kn_node *n, const double *k, const double *c, int64_t C) {
    kn_value *x = n->in[0];
    kn_node *h = x->producer;
    if (!h || h->graph != rw->g || kn_rw_dead(rw, h) || h->nout != 1 ||
        kn_node_attr(h, KN_ATTR_EPILOGUE) || kn_rw_only_reader(rw, x) != n)
        return false;
    bool ok = false;
    if ((h->op == KN_OP_CONV || h->op == KN_OP_CONVTRANSPOSE) && h->nin >= 2)
        ok = fold_conv(rw, h, k, c, C);
    else if (h->op == KN_OP_GEMM && x->type.rank == 2 && h->nin >= 2)
        ok = fold_gemm(rw, h, k, c, C);
    if (!ok) return false;
    kn_value *y = n->out[0];
    kn_rw_kill(rw, n);
    h->out[0] = y;
    y->producer = h;
    return true;
}

/* n as y = Add(Mul(x, k), c) placed where n was. */
static void to_mul_add(kn_rw *rw, kn_node *n, const double *k, const double *c, int64_t C) {
    kn_graph *g = rw->g;
    kn_value *x = n->in[0], *y = n->out[0];
    int rank = x->type.rank;
    int64_t dims[KN_MAX_RANK];
    dims[0] = C;
    for (int d = 1; d < rank - 1; d++) dims[d] = 1;
    kn_tensor *K = kn_tensor_make(g->arena, x->type.dtype, rank - 1, dims);
    kn_tensor *Cc = kn_tensor_make(g->arena, x->type.dtype, rank - 1, dims);
    KN_ASSERT(K && Cc);
    for (int64_t o = 0; o < C; o++) {
        kn_tensor_set_f64(K, o, k[o]);
        kn_tensor_set_f64(Cc, o, c[o]);
    }
    int at = n->id;
    kn_rw_kill(rw, n);
    kn_value *t = kn_rw_value(rw, y->name, "scaled", &x->type);
    kn_value *mi[2] = {x, kn_rw_const(rw, n->name, "scale", K)};
    kn_value *ai[2] = {t, kn_rw_const(rw, n->name, "shift", Cc)};
    char name[256];
    snprintf(name, sizeof name, "%s/mul", n->name);
    kn_rw_node(rw, at, KN_OP_MUL, name, 2, mi, 1, &t);
    snprintf(name, sizeof name, "%s/add", n->name);
    kn_rw_node(rw, at, KN_OP_ADD, name, 2, ai, 1, &y);
}

kn_status kn_pass_bnfold(kn_ctx *cx, kn_graph *g) {
    kn_rw rw;
    if (kn_rw_begin(&rw, cx, g)) {
        for (int i = 0; i < rw.n0; i++) {
            kn_node *n = g->nodes[i];
            double *k, *c;
            int64_t C;
            if (n->op != KN_OP_BATCHNORMALIZATION || !bn_coefs(cx, &rw, n, &k, &c, &C)) continue;
            if (!fold(&rw, n, k, c, C)) to_mul_add(&rw, n, k, c, C);
        }
    }
    kn_rw_end(&rw);
    return KN_OK;
}
