/* Lowerings of group 'misc': the losses (NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss) and the training optimizers (Adagrad, Adam, Momentum).
 *
 * The losses view the input as [N, C, D] (D the product of the trailing dims) and
 * walk (n, d) once: SoftmaxCrossEntropyLoss first computes the log-sum-exp over C
 * (and writes log_prob when asked), then both pick the target class. A target out
 * of [0, C) (an error in the interpreter) contributes nothing, so no load goes out
 * of bounds. Sums accumulate in the output's compute dtype. Optimizers are
 * elementwise over each X; their scalar coefficients (from R and T) are computed
 * once in f64, as the interpreter does. TfIdfVectorizer is lowered for integer
 * pools only (strings cannot compile). Random ops are deliberately not lowered:
 * generated code has no random state. */
#include "ir/kir.h"
#include "ir/ops/misc_attrs.h"

#include <math.h>
#include <string.h>

/* ---- losses ---- */

static kn_status lower_loss(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_loss_params lpar;
    if (kn_loss_params_get(cx, n, &lpar)) return cx->status;
    int has_ii = lpar.has_ii, none = lpar.red == RED_NONE, sum_only = lpar.red == RED_SUM;
    int64_t ii = lpar.ignore_index;
    int sce = n->op == KN_OP_SOFTMAXCROSSENTROPYLOSS;
    kn_kbuf *x = in[0], *tg = in[1], *w = in[2], *lp = sce && n->nout > 1 ? out[1] : NULL;
    kn_dtype ct = kx_compute_dtype(out[0]->dtype);
    int64_t N = x->dims[0], C = x->dims[1], D = kn_prod(x->dims, 2, x->rank);

    int sum = -1, wsum = -1;
    if (!none) {
        sum = kl_decl(L, ct, kx_const(L, ct, 0));
        wsum = kl_decl(L, ct, kx_const(L, ct, 0));
    }
    int vi = kl_for(L, N), vd = kl_for(L, D);
    kn_kx *i = kx_var(L, vi), *d = kx_var(L, vd);
    /* x[(i*C + c)*D + d] */
    kn_kx *xrow = kx_bin(L, KX_MUL, i, kx_int(L, C * D));
    kn_kx *lse = NULL;
    if (sce) {
        int mx = kl_decl(L, ct, kx_const(L, ct, -INFINITY));
        int vc = kl_for(L, C);
        kn_kx *xi = kx_bin(L, KX_ADD, kx_bin(L, KX_ADD, xrow, d),
                           kx_bin(L, KX_MUL, kx_var(L, vc), kx_int(L, D)));
        kl_set(L, mx, kx_bin(L, KX_MAX, kx_var(L, mx), kx_load(L, x, xi)));
        kl_end(L);
        int s = kl_decl(L, ct, kx_const(L, ct, 0));
        vc = kl_for(L, C);
        xi = kx_bin(L, KX_ADD, kx_bin(L, KX_ADD, xrow, d),
                    kx_bin(L, KX_MUL, kx_var(L, vc), kx_int(L, D)));
        kl_set(L, s,
               kx_bin(L, KX_ADD, kx_var(L, s),
                      kx_un(L, KX_EXP, kx_bin(L, KX_SUB, kx_load(L, x, xi), kx_var(L, mx)))));
        kl_end(L);
        int vl = kl_decl(L, ct, kx_bin(L, KX_ADD, kx_var(L, mx), kx_un(L, KX_LOG, kx_var(L, s))));
        lse = kx_var(L, vl);
        if (lp) {
            vc = kl_for(L, C);
            xi = kx_bin(L, KX_ADD, kx_bin(L, KX_ADD, xrow, d),
                        kx_bin(L, KX_MUL, kx_var(L, vc), kx_int(L, D)));
            kl_store(L, lp, xi, kx_bin(L, KX_SUB, kx_load(L, x, xi), lse));
            kl_end(L);
        }
    }
    kn_kx *ti = kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, i, kx_int(L, D)), d);
    int t = kl_decl(L, KN_I64, kx_load(L, tg, ti));
    kn_kx *tv = kx_var(L, t);
    kn_kx *ok =
        kx_bin(L, KX_LAND, kx_bin(L, KX_GE, tv, kx_int(L, 0)), kx_bin(L, KX_LT, tv, kx_int(L, C)));
    if (has_ii) ok = kx_bin(L, KX_LAND, kx_bin(L, KX_NE, tv, kx_int(L, ii)), ok);
    kl_if(L, ok);
    kn_kx *wi = w ? kx_load(L, w, tv) : kx_const(L, ct, 1);
    int vw = kl_decl(L, ct, wi);
    kn_kx *v = kx_load(
        L, x, kx_bin(L, KX_ADD, kx_bin(L, KX_ADD, xrow, d), kx_bin(L, KX_MUL, tv, kx_int(L, D))));
    if (lse) v = kx_bin(L, KX_SUB, v, lse);
    kn_kx *loss = kx_bin(L, KX_MUL, kx_un(L, KX_NEG, v), kx_var(L, vw));
    if (none) {
        kl_store(L, out[0], ti, loss);
        kl_else(L);
        kl_store(L, out[0], ti, kx_const(L, ct, 0));
    } else {
        kl_set(L, sum, kx_bin(L, KX_ADD, kx_var(L, sum), loss));
        kl_set(L, wsum, kx_bin(L, KX_ADD, kx_var(L, wsum), kx_var(L, vw)));
    }
    kl_end(L); /* if */
    kl_end_n(L, 2);
    if (!none)
        kl_store(L, out[0], kx_int(L, 0),
                 sum_only ? kx_var(L, sum) : kx_bin(L, KX_DIV, kx_var(L, sum), kx_var(L, wsum)));
    return KN_OK;
}

/* ---- optimizers ---- */

/* A scalar input's single element as f64. */
static kn_kx *scalar_f64(kn_lower *L, kn_kbuf *b) {
    return kx_cast(L, KN_F64, kx_load(L, b, kx_int(L, 0)));
}

static kn_kx *f64c(kn_lower *L, double v) {
    return kx_const(L, KN_F64, v);
}

/* Opens a loop over X's elements; returns the index expression. */
static kn_kx *elem_loop(kn_lower *L, const kn_kbuf *x) {
    return kx_var(L, kl_for(L, x->numel));
}

static kn_status lower_adagrad(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                               kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_optim_attrs o;
    if (kn_optim_attrs_get(cx, n, &o)) return cx->status;
    int k = (n->nin - 2) / 3;
    /* r = R / (1 + T * o.decay) */
    kn_kx *T = kx_cast(L, KN_F64, kx_load(L, in[1], kx_int(L, 0)));
    int r = kl_decl(L, KN_F64,
                    kx_bin(L, KX_DIV, scalar_f64(L, in[0]),
                           kx_bin(L, KX_ADD, f64c(L, 1), kx_bin(L, KX_MUL, T, f64c(L, o.decay)))));
    for (int j = 0; j < k; j++) {
        kn_kbuf *X = in[2 + j], *G = in[2 + k + j], *H = in[2 + 2 * k + j];
        kn_dtype ct = kx_compute_dtype(X->dtype);
        kn_kx *e = elem_loop(L, X);
        kn_kx *x = kx_load(L, X, e);
        int g = kl_decl(L, ct, kx_fma(L, kx_const(L, ct, o.norm), x, kx_load(L, G, e)));
        int h = kl_decl(L, ct, kx_fma(L, kx_var(L, g), kx_var(L, g), kx_load(L, H, e)));
        kn_kx *step =
            kx_bin(L, KX_DIV, kx_bin(L, KX_MUL, kx_cast(L, ct, kx_var(L, r)), kx_var(L, g)),
                   kx_bin(L, KX_ADD, kx_un(L, KX_SQRT, kx_var(L, h)), kx_const(L, ct, o.eps)));
        if (out[j]) kl_store(L, out[j], e, kx_bin(L, KX_SUB, x, step));
        if (out[k + j]) kl_store(L, out[k + j], e, kx_var(L, h));
        kl_end(L);
    }
    return KN_OK;
}

static kn_status lower_momentum(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_optim_attrs o;
    if (kn_optim_attrs_get(cx, n, &o)) return cx->status;
    int k = (n->nin - 2) / 3;
    int R = kl_decl(L, KN_F64, scalar_f64(L, in[0]));
    /* beta_adj = T > 0 ? o.beta : 1 */
    int badj = kl_decl(L, KN_F64,
                       kx_select(L, kx_bin(L, KX_GT, kx_load(L, in[1], kx_int(L, 0)), kx_int(L, 0)),
                                 f64c(L, o.beta), f64c(L, 1)));
    for (int j = 0; j < k; j++) {
        kn_kbuf *X = in[2 + j], *G = in[2 + k + j], *V = in[2 + 2 * k + j];
        kn_dtype ct = kx_compute_dtype(X->dtype);
        kn_kx *e = elem_loop(L, X);
        kn_kx *x = kx_load(L, X, e);
        int g = kl_decl(L, ct, kx_fma(L, kx_const(L, ct, o.norm), x, kx_load(L, G, e)));
        int v = kl_decl(L, ct,
                        kx_fma(L, kx_const(L, ct, o.alpha), kx_load(L, V, e),
                               kx_bin(L, KX_MUL, kx_cast(L, ct, kx_var(L, badj)), kx_var(L, g))));
        kn_kx *dir = o.nesterov ? kx_fma(L, kx_const(L, ct, o.alpha), kx_var(L, v), kx_var(L, g))
                                : kx_var(L, v);
        if (out[j])
            kl_store(L, out[j], e,
                     kx_bin(L, KX_SUB, x, kx_bin(L, KX_MUL, kx_cast(L, ct, kx_var(L, R)), dir)));
        if (out[k + j]) kl_store(L, out[k + j], e, kx_var(L, v));
        kl_end(L);
    }
    return KN_OK;
}

static kn_status lower_adam(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_optim_attrs o;
    if (kn_optim_attrs_get(cx, n, &o)) return cx->status;
    int k = (n->nin - 2) / 4;
    /* r = T > 0 ? R * sqrt(1 - o.beta^T) / (1 - o.alpha^T) : R */
    int T = kl_decl(L, KN_I64, kx_load(L, in[1], kx_int(L, 0)));
    kn_kx *Tf = kx_cast(L, KN_F64, kx_var(L, T));
    kn_kx *R = scalar_f64(L, in[0]);
    kn_kx *adj =
        kx_bin(L, KX_DIV,
               kx_bin(L, KX_MUL, R,
                      kx_un(L, KX_SQRT,
                            kx_bin(L, KX_SUB, f64c(L, 1), kx_bin(L, KX_POW, f64c(L, o.beta), Tf)))),
               kx_bin(L, KX_SUB, f64c(L, 1), kx_bin(L, KX_POW, f64c(L, o.alpha), Tf)));
    int r = kl_decl(L, KN_F64, kx_select(L, kx_bin(L, KX_GT, kx_var(L, T), kx_int(L, 0)), adj, R));
    for (int j = 0; j < k; j++) {
        kn_kbuf *X = in[2 + j], *G = in[2 + k + j], *V = in[2 + 2 * k + j], *H = in[2 + 3 * k + j];
        kn_dtype ct = kx_compute_dtype(X->dtype);
        kn_kx *e = elem_loop(L, X);
        kn_kx *x = kx_load(L, X, e);
        int g = kl_decl(L, ct, kx_fma(L, kx_const(L, ct, o.norm), x, kx_load(L, G, e)));
        kn_kx *gv = kx_var(L, g);
        int v = kl_decl(L, ct,
                        kx_fma(L, kx_const(L, ct, o.alpha), kx_load(L, V, e),
                               kx_bin(L, KX_MUL, kx_const(L, ct, 1 - o.alpha), gv)));
        int h = kl_decl(
            L, ct,
            kx_fma(L, kx_const(L, ct, o.beta), kx_load(L, H, e),
                   kx_bin(L, KX_MUL, kx_const(L, ct, 1 - o.beta), kx_bin(L, KX_MUL, gv, gv))));
        kn_kx *step = kx_bin(
            L, KX_MUL, kx_cast(L, ct, kx_var(L, r)),
            kx_bin(L, KX_DIV, kx_var(L, v),
                   kx_bin(L, KX_ADD, kx_un(L, KX_SQRT, kx_var(L, h)), kx_const(L, ct, o.eps))));
        if (out[j])
            kl_store(L, out[j], e,
                     kx_bin(L, KX_MUL, kx_const(L, ct, 1 - o.post), kx_bin(L, KX_SUB, x, step)));
        if (out[k + j]) kl_store(L, out[k + j], e, kx_var(L, v));
        if (out[2 * k + j]) kl_store(L, out[2 * k + j], e, kx_var(L, h));
        kl_end(L);
    }
    return KN_OK;
}

/* ---- TfIdfVectorizer (integer tokens) ---- */

/* The pool is an attribute: each n-gram becomes its own counting loop nest with its
 * tokens as constants, so code grows with the pool (the model), not the input. A
 * constant-table buffer in the kernel IR would make this one loop over the pool. */
static kn_status lower_tfidf(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                             kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    int64_t minn = kn_attr_int(cx, n, "min_gram_length", 0);
    int64_t maxn = kn_attr_int(cx, n, "max_gram_length", 0);
    int64_t maxskip = kn_attr_int(cx, n, "max_skip_count", 0);
    const char *mode = kn_attr_str(cx, n, "mode", "");
    const int64_t *counts, *idx, *pool;
    const float *weights;
    int ncounts = kn_attr_ints(cx, n, "ngram_counts", &counts);
    int nidx = kn_attr_ints(cx, n, "ngram_indexes", &idx);
    int nweights = kn_attr_floats(cx, n, "weights", &weights);
    int npool = kn_attr_ints(cx, n, "pool_int64s", &pool);
    if (kn_failed(cx)) return cx->status;
    if (npool < 0)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "string pools are not supported by code generation");
    int m = !strcmp(mode, "TF") ? 0 : !strcmp(mode, "IDF") ? 1 : 2;
    kn_kbuf *X = in[0], *Y = out[0];
    int64_t rows = X->rank == 2 ? X->dims[0] : 1, C = X->dims[X->rank - 1];
    int64_t width = Y->dims[Y->rank - 1];
    kn_dtype ct = kx_compute_dtype(Y->dtype);
    int r = kl_for(L, rows);
    int e = kl_for(L, width);
    kl_store(L, Y,
             kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_var(L, r), kx_int(L, width)), kx_var(L, e)),
             kx_const(L, ct, 0));
    kl_end(L);
    int gi = 0;
    for (int g = 1; g <= ncounts; g++) {
        int64_t s = counts[g - 1], end = g < ncounts ? counts[g] : npool;
        for (int64_t j = s; j + g <= end; j += g, gi++) {
            if (gi >= nidx) return kn_diag(cx, n, KN_EINVAL, "more n-grams than ngram_indexes");
            int cnt = kl_decl(L, ct, kx_const(L, ct, 0));
            if (g >= minn && g <= maxn) {
                int st = kl_for(L, C);
                int sk = kl_for(L, g == 1 ? 1 : maxskip + 1);
                kn_kx *step = kx_bin(L, KX_ADD, kx_var(L, sk), kx_int(L, 1));
                kn_kx *lastpos =
                    kx_bin(L, KX_ADD, kx_var(L, st), kx_bin(L, KX_MUL, kx_int(L, g - 1), step));
                kl_if(L, kx_bin(L, KX_LT, lastpos, kx_int(L, C)));
                kn_kx *ok = NULL;
                for (int k = 0; k < g; k++) {
                    kn_kx *pos =
                        kx_bin(L, KX_ADD, kx_var(L, st), kx_bin(L, KX_MUL, kx_int(L, k), step));
                    kn_kx *xi =
                        kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_var(L, r), kx_int(L, C)), pos);
                    kn_kx *eq = kx_bin(L, KX_EQ, kx_cast(L, KN_I64, kx_load(L, X, xi)),
                                       kx_int(L, pool[j + k]));
                    ok = ok ? kx_bin(L, KX_LAND, ok, eq) : eq;
                }
                kl_if(L, ok);
                kl_set(L, cnt, kx_bin(L, KX_ADD, kx_var(L, cnt), kx_const(L, ct, 1)));
                kl_end_n(L, 4);
            }
            double w = nweights > 0 ? weights[gi] : 1;
            kn_kx *v = kx_var(L, cnt);
            if (m == 1)
                v = kx_select(L, kx_bin(L, KX_GT, v, kx_const(L, ct, 0)), kx_const(L, ct, w),
                              kx_const(L, ct, 0));
            else if (m == 2)
                v = kx_bin(L, KX_MUL, v, kx_const(L, ct, w));
            kl_store(L, Y,
                     kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_var(L, r), kx_int(L, width)),
                            kx_int(L, idx[gi])),
                     v);
        }
    }
    kl_end(L);
    return KN_OK;
}

const kn_oplower kn_lower_misc[] = {
    {KN_OP_NEGATIVELOGLIKELIHOODLOSS, lower_loss},
    {KN_OP_SOFTMAXCROSSENTROPYLOSS, lower_loss},
    {KN_OP_ADAGRAD, lower_adagrad},
    {KN_OP_MOMENTUM, lower_momentum},
    {KN_OP_ADAM, lower_adam},
    {KN_OP_TFIDFVECTORIZER, lower_tfidf},
    {KN_OP_COUNT, 0},
};
