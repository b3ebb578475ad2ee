/* Miscellaneous operators: the losses (NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss), text (StringConcat, StringNormalizer, StringSplit,
 * RegexFullMatch, TfIdfVectorizer), random
 * generators (Bernoulli, RandomUniform/Normal[Like], Multinomial) and the training
 * optimizers of ai.onnx.preview.training (Adagrad, Adam, Momentum).
 *
 * Random ops draw from kn_exec_random(), the interpreter's deterministic stream:
 * their dtype and shape are exact, their values cannot equal another runtime's.
 * Optimizers update several tensors at once: inputs are R, T, then groups of k
 * tensors (X..., G..., and the state tensors), outputs the new X... then the new
 * states, following the ONNX formulas literally. Gradient is left unregistered:
 * it needs automatic differentiation of the graph, which kiln does not do. */
#include "ir/ops/misc_attrs.h"

#include "ir/regex.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- losses ---- */

kn_status kn_loss_params_get(kn_ctx *cx, const kn_node *n, kn_loss_params *p) {
    const char *red = kn_attr_str(cx, n, "reduction", "mean");
    p->has_ii = kn_node_attr(n, "ignore_index") != NULL;
    p->ignore_index = kn_attr_int(cx, n, "ignore_index", 0);
    if (kn_failed(cx)) return cx->status;
    if (!strcmp(red, "none"))
        p->red = RED_NONE;
    else if (!strcmp(red, "sum"))
        p->red = RED_SUM;
    else if (!strcmp(red, "mean"))
        p->red = RED_MEAN;
    else
        return kn_diag(cx, n, KN_EINVAL, "reduction '%s' is not none, sum or mean", red);
    return KN_OK;
}

/* Checks input [N, C, d...], target [N, d...] and weight [C]; sets the loss type. */
static kn_status infer_loss_common(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out,
                                   kn_loss_params *p) {
    if (kn_loss_params_get(cx, n, p)) return cx->status;
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT) ||
        kn_check_dtype(cx, n, in[1], 1, KN_DT(I32) | KN_DT(I64)))
        return cx->status;
    kn_tensor *w = kn_opt_in(n, in, 2);
    if (w && kn_check_dtype(cx, n, w, 2, KN_DT_FLOAT)) return cx->status;
    const kn_type *x = &in[0]->type, *t = &in[1]->type;
    if (x->rank >= 0 && x->rank < 2)
        return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected at least 2", x->rank);
    if (x->rank >= 0 && t->rank >= 0) {
        if (t->rank != x->rank - 1)
            return kn_diag(cx, n, KN_EINVAL, "target has rank %d, expected %d", t->rank,
                           x->rank - 1);
        for (int d = 0; d < t->rank; d++) {
            int64_t a = x->dims[d == 0 ? 0 : d + 1], b = t->dims[d];
            if (a >= 0 && b >= 0 && a != b)
                return kn_diag(cx, n, KN_EINVAL, "target dim %d is %lld, expected %lld", d,
                               (long long)b, (long long)a);
        }
    }
    if (w && x->rank >= 2 && w->type.rank >= 0 &&
        (w->type.rank != 1 ||
         (w->type.dims[0] >= 0 && x->dims[1] >= 0 && w->type.dims[0] != x->dims[1])))
        return kn_diag(cx, n, KN_EINVAL, "weight must have shape [C]");
    if (p->red != RED_NONE)
        out[0] = kn_type_scalar(x->dtype);
    else {
        out[0] = *t;
        out[0].dtype = x->dtype;
    }
    return KN_OK;
}

/* The NLL loss of log-probabilities lp [N, C, D] (D = product of the trailing dims)
 * into out[0]. */
static kn_status nll(kn_exec *ex, const kn_node *n, const kn_loss_params *p, const double *lp,
                     const kn_type *xt, kn_tensor *const *in, kn_tensor *out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_arena *a = kn_exec_arena(ex);
    int64_t N = xt->dims[0], C = xt->dims[1], D = 1;
    for (int d = 2; d < xt->rank; d++) D *= xt->dims[d];
    int64_t *tg = kn_tensor_i64s(a, in[1]);
    kn_tensor *wt = kn_opt_in(n, in, 2);
    double *w = wt ? kn_tensor_f64s(a, wt) : NULL;
    double *loss = kn_arena_array(a, (size_t)(N * D + 1), sizeof *loss);
    if (!loss) return kn_diag(cx, n, KN_ELIMIT, "loss too large");
    double sum = 0, wsum = 0;
    for (int64_t i = 0; i < N; i++)
        for (int64_t d = 0; d < D; d++) {
            int64_t t = tg[i * D + d];
            if (p->has_ii && t == p->ignore_index) continue;
            if (t < 0 || t >= C)
                return kn_diag(cx, n, KN_EINVAL, "target %lld is out of range [0, %lld)",
                               (long long)t, (long long)C);
            double wi = w ? w[t] : 1;
            loss[i * D + d] = -lp[(i * C + t) * D + d] * wi;
            sum += loss[i * D + d];
            wsum += wi;
        }
    if (p->red == RED_NONE)
        kn_tensor_store_f64s(out, loss);
    else
        kn_store_f64(out->data, out->type.dtype, 0, p->red == RED_SUM ? sum : sum / wsum);
    return KN_OK;
}

static kn_status infer_nll(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_loss_params p;
    return infer_loss_common(cx, n, in, out, &p);
}

static kn_status eval_nll(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_loss_params p;
    kn_type t;
    if (infer_loss_common(kn_exec_ctx(ex), n, in, &t, &p)) return kn_exec_ctx(ex)->status;
    double *x = kn_tensor_f64s(kn_exec_arena(ex), in[0]);
    return nll(ex, n, &p, x, &in[0]->type, in, out[0]);
}

static kn_status infer_sce(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    kn_loss_params p;
    if (infer_loss_common(cx, n, in, out, &p)) return cx->status;
    if (n->nout > 1) out[1] = in[0]->type;
    return KN_OK;
}

static kn_status eval_sce(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_loss_params p;
    kn_type t;
    if (infer_loss_common(kn_exec_ctx(ex), n, in, &t, &p)) return kn_exec_ctx(ex)->status;
    const kn_type *xt = &in[0]->type;
    double *x = kn_tensor_f64s(kn_exec_arena(ex), in[0]);
    int64_t N = xt->dims[0], C = xt->dims[1], D = 1;
    for (int d = 2; d < xt->rank; d++) D *= xt->dims[d];
    /* log_softmax over axis 1, in place */
    for (int64_t i = 0; i < N; i++)
        for (int64_t d = 0; d < D; d++) {
            double mx = -INFINITY, s = 0;
            for (int64_t c = 0; c < C; c++) mx = fmax(mx, x[(i * C + c) * D + d]);
            for (int64_t c = 0; c < C; c++) s += exp(x[(i * C + c) * D + d] - mx);
            for (int64_t c = 0; c < C; c++) x[(i * C + c) * D + d] -= mx + log(s);
        }
    if (n->nout > 1 && out[1]) kn_tensor_store_f64s(out[1], x);
    return nll(ex, n, &p, x, xt, in, out[0]);
}

/* ---- StringNormalizer ---- */

/* Whether string s survives the stopword filter. */
static int strnorm_keep(kn_ctx *cx, const kn_node *n, const char *s) {
    const char *const *stop = NULL;
    int nstop = kn_attr_strings(cx, n, "stopwords", &stop);
    int sensitive = (int)kn_attr_int(cx, n, "is_case_sensitive", 0);
    for (int i = 0; i < nstop; i++)
        if (sensitive ? !strcmp(s, stop[i]) : kn_str_eq_nocase(s, stop[i])) return 0;
    return 1;
}

static kn_status infer_strnorm(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    const char *act = kn_attr_str(cx, n, "case_change_action", "NONE");
    if (kn_failed(cx)) return cx->status;
    if (strcmp(act, "NONE") && strcmp(act, "LOWER") && strcmp(act, "UPPER"))
        return kn_diag(cx, n, KN_EINVAL, "case_change_action '%s' is not NONE, LOWER or UPPER",
                       act);
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT(STRING))) return cx->status;
    const kn_type *x = &in[0]->type;
    if (x->rank < 0) {
        out[0] = kn_type_unknown(KN_STRING);
        return KN_OK;
    }
    if (x->rank != 1 && !(x->rank == 2 && x->dims[0] == 1) && !(x->rank == 2 && x->dims[0] < 0))
        return kn_diag(cx, n, KN_EINVAL, "input must have shape [C] or [1, C]");
    int64_t kept = -1;
    const char *const *stop = NULL;
    if (kn_attr_strings(cx, n, "stopwords", &stop) <= 0 && kn_type_static(x)) {
        kept = kn_type_numel(x); /* nothing is removed: the shape is static */
        if (kept == 0) kept = 1;
    } else if (in[0]->data) {
        kept = 0;
        int64_t cnt = kn_tensor_numel(in[0]);
        for (int64_t i = 0; i < cnt; i++) kept += strnorm_keep(cx, n, ((char **)in[0]->data)[i]);
        if (kn_failed(cx)) return cx->status;
        if (kept == 0) kept = 1; /* an all-stopword input gives one empty string */
    }
    int64_t dims[2] = {1, kept};
    out[0] = x->rank == 1 ? kn_type_make(KN_STRING, 1, dims + 1) : kn_type_make(KN_STRING, 2, dims);
    return KN_OK;
}

static kn_status eval_strnorm(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    const char *act = kn_attr_str(cx, n, "case_change_action", "NONE");
    char **src = in[0]->data, **dst = out[0]->data;
    int64_t cnt = kn_tensor_numel(in[0]), k = 0;
    for (int64_t i = 0; i < cnt; i++) {
        if (!strnorm_keep(cx, n, src[i])) continue;
        char *s = kn_arena_strdup(kn_exec_arena(ex), src[i]);
        for (char *c = s; *c; c++) {
            if (act[0] == 'L' && *c >= 'A' && *c <= 'Z') *c = (char)(*c - 'A' + 'a');
            if (act[0] == 'U' && *c >= 'a' && *c <= 'z') *c = (char)(*c - 'a' + 'A');
        }
        KN_ASSERT(k < kn_tensor_numel(out[0]));
        dst[k++] = s;
    }
    return cx->status;
}

/* ---- StringConcat (opset 20): x + y elementwise, numpy broadcasting ---- */

static kn_status infer_strconcat(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT(STRING)) ||
        kn_check_dtype(cx, n, in[1], 1, KN_DT(STRING)))
        return cx->status;
    const kn_type *ts[2] = {&in[0]->type, &in[1]->type};
    out[0] = kn_type_unknown(KN_STRING);
    if (ts[0]->rank < 0 || ts[1]->rank < 0) return KN_OK;
    return kn_broadcast(cx, n, 2, ts, &out[0]);
}

static kn_status eval_strconcat(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_strconcat)) return cx->status;
    const kn_type *yt = &out[0]->type;
    int64_t sa[KN_MAX_RANK], sb[KN_MAX_RANK], cnt = kn_tensor_numel(out[0]);
    kn_bcast_strides(&in[0]->type, yt->rank, yt->dims, sa);
    kn_bcast_strides(&in[1]->type, yt->rank, yt->dims, sb);
    char **a = in[0]->data, **b = in[1]->data, **y = out[0]->data;
    for (int64_t i = 0; i < cnt; i++) {
        const char *p = a[kn_bcast_offset(i, yt->rank, yt->dims, sa)];
        const char *q = b[kn_bcast_offset(i, yt->rank, yt->dims, sb)];
        size_t lp = strlen(p), lq = strlen(q);
        char *s = kn_arena_alloc(kn_exec_arena(ex), lp + lq + 1);
        if (!s) return kn_diag(cx, n, KN_ELIMIT, "out of memory");
        memcpy(s, p, lp);
        memcpy(s + lp, q, lq + 1);
        y[i] = s;
    }
    return KN_OK;
}

/* ---- StringSplit (opset 20): Python's str.split, padded with "" to the longest ---- */

/* The byte length of the whitespace code point at p (Python's str.isspace: ASCII
 * \t\n\v\f\r, 0x1c-0x1f and space, and the Unicode spaces in UTF-8), or 0. */
static int split_space(const unsigned char *p) {
    if ((*p >= 9 && *p <= 13) || (*p >= 0x1c && *p <= 0x20)) return 1;
    if (p[0] == 0xc2 && (p[1] == 0x85 || p[1] == 0xa0)) return 2;
    if (p[0] == 0xe1 && p[1] == 0x9a && p[2] == 0x80) return 3; /* U+1680 */
    if (p[0] == 0xe2 && p[1] == 0x80 &&
        ((p[2] >= 0x80 && p[2] <= 0x8a) || p[2] == 0xa8 || p[2] == 0xa9 || p[2] == 0xaf))
        return 3;                                               /* U+2000-200A, 2028, 2029, 202F */
    if (p[0] == 0xe2 && p[1] == 0x81 && p[2] == 0x9f) return 3; /* U+205F */
    if (p[0] == 0xe3 && p[1] == 0x80 && p[2] == 0x80) return 3; /* U+3000 */
    return 0;
}

/* Splits s as Python's s.split(delim or None, maxsplit): calls put(ctx, start, len) for
 * each piece (when put is not NULL) and returns their count. */
static int64_t split_one(const char *s, const char *delim, int64_t maxsplit,
                         void (*put)(void *, const char *, size_t), void *ctx) {
    int64_t cnt = 0, left = maxsplit < 0 ? INT64_MAX : maxsplit;
    const unsigned char *p = (const unsigned char *)s;
    if (delim && *delim) {
        size_t dl = strlen(delim);
        const char *q;
        while (left-- > 0 && (q = strstr((const char *)p, delim))) {
            if (put) put(ctx, (const char *)p, (size_t)(q - (const char *)p));
            cnt++;
            p = (const unsigned char *)q + dl;
        }
        if (put) put(ctx, (const char *)p, strlen((const char *)p));
        return cnt + 1;
    }
    int w;
    while (left-- > 0) { /* CPython's split_whitespace */
        while (*p && (w = split_space(p))) p += w;
        if (!*p) break;
        const unsigned char *b = p;
        while (*p && !split_space(p)) p++;
        if (put) put(ctx, (const char *)b, (size_t)(p - b));
        cnt++;
    }
    while (*p && (w = split_space(p))) p += w;
    if (*p) {
        if (put) put(ctx, (const char *)p, strlen((const char *)p));
        cnt++;
    }
    return cnt;
}

static kn_status split_attrs(kn_ctx *cx, const kn_node *n, const char **delim, int64_t *maxsplit) {
    *delim = kn_attr_str(cx, n, "delimiter", "");
    *maxsplit = kn_attr_int(cx, n, "maxsplit", -1);
    return cx->status;
}

static kn_status infer_strsplit(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    const char *delim;
    int64_t maxsplit;
    if (split_attrs(cx, n, &delim, &maxsplit) || kn_check_dtype(cx, n, in[0], 0, KN_DT(STRING)))
        return cx->status;
    const kn_type *x = &in[0]->type;
    out[0] = kn_type_unknown(KN_STRING);
    if (n->nout > 1) out[1] = kn_type_unknown(KN_I64);
    if (x->rank < 0) return KN_OK;
    if (x->rank + 1 > KN_MAX_RANK)
        return kn_diag(cx, n, KN_EUNSUPPORTED, "input of rank %d: the output would have rank %d",
                       x->rank, x->rank + 1);
    int64_t dims[KN_MAX_RANK];
    memcpy(dims, x->dims, (size_t)x->rank * sizeof *dims);
    /* the width of the output: the most pieces of any element, known from the data only */
    dims[x->rank] = -1;
    if (kn_type_static(x) && kn_type_numel(x) == 0) dims[x->rank] = 0;
    if (in[0]->data) {
        int64_t cnt = kn_tensor_numel(in[0]), width = 0;
        for (int64_t i = 0; i < cnt; i++) {
            int64_t k = split_one(((char **)in[0]->data)[i], delim, maxsplit, NULL, NULL);
            if (k > width) width = k;
        }
        dims[x->rank] = width;
    }
    out[0] = kn_type_make(KN_STRING, x->rank + 1, dims);
    if (n->nout > 1) out[1] = kn_type_make(KN_I64, x->rank, dims);
    return KN_OK;
}

typedef struct split_out {
    kn_arena *a;
    char **y;
    int64_t k;
    bool oom;
} split_out;

static void split_put(void *ctx, const char *s, size_t len) {
    split_out *o = ctx;
    char *d = kn_arena_alloc(o->a, len + 1);
    if (!d) {
        o->oom = true;
        return;
    }
    memcpy(d, s, len);
    d[len] = 0;
    o->y[o->k++] = d;
}

static kn_status eval_strsplit(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                               kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_strsplit)) return cx->status;
    const char *delim;
    int64_t maxsplit;
    split_attrs(cx, n, &delim, &maxsplit);
    const kn_type *yt = &out[0]->type;
    int64_t cnt = kn_tensor_numel(in[0]), width = yt->dims[yt->rank - 1];
    char **src = in[0]->data, **y = out[0]->data;
    for (int64_t i = 0; i < cnt; i++) {
        split_out o = {kn_exec_arena(ex), y + i * width, 0, false};
        int64_t k = split_one(src[i], delim, maxsplit, split_put, &o);
        if (o.oom) return kn_diag(cx, n, KN_ELIMIT, "out of memory");
        KN_ASSERT(k == o.k && k <= width);
        for (; o.k < width; o.k++) o.y[o.k] = "";
        if (n->nout > 1 && out[1]) ((int64_t *)out[1]->data)[i] = k;
    }
    return KN_OK;
}

/* ---- RegexFullMatch (opset 20): RE2 pattern through ir/regex.c's POSIX translation ---- */

/* Reads and translates the pattern into posix[0..cap). */
static kn_status regex_pattern(kn_ctx *cx, const kn_node *n, char *posix, size_t cap, int *flags) {
    const kn_attr *a = kn_node_attr(n, "pattern");
    const char *re2 = kn_attr_str(cx, n, "pattern", "");
    if (kn_failed(cx)) return cx->status;
    if (!a) return kn_diag(cx, n, KN_EINVAL, "attribute 'pattern' is required");
    char why[200];
    if (kn_regex_translate(re2, posix, cap, flags, why, sizeof why))
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "pattern '%s': %s (kiln runs RE2 patterns as POSIX extended regular "
                       "expressions; see docs/decisions.md)",
                       re2, why);
    return KN_OK;
}

static kn_status infer_regex(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    char posix[KN_REGEX_MAX];
    int flags;
    if (regex_pattern(cx, n, posix, sizeof posix, &flags) ||
        kn_check_dtype(cx, n, in[0], 0, KN_DT(STRING)))
        return cx->status;
    out[0] = in[0]->type;
    out[0].dtype = KN_BOOL;
    return KN_OK;
}

static kn_status eval_regex(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    if (kn_alloc_outputs(ex, n, in, out, infer_regex)) return cx->status;
    char posix[KN_REGEX_MAX];
    int flags;
    if (regex_pattern(cx, n, posix, sizeof posix, &flags)) return cx->status;
    if (kn_regex_match_all(posix, flags, (const char *const *)in[0]->data, kn_tensor_numel(in[0]),
                           out[0]->data))
        return kn_diag(cx, n, KN_ELIMIT, "regcomp failed (out of memory)");
    return KN_OK;
}

/* ---- TfIdfVectorizer ---- */

typedef struct tfidf {
    int64_t minn, maxn, maxskip;
    int mode; /* 0 TF, 1 IDF, 2 TFIDF */
    int ncounts, nidx, nweights, npool;
    const int64_t *counts, *idx, *pool_i;
    const float *weights;
    const char *const *pool_s;
    int64_t width; /* output width: max(ngram_indexes) + 1 */
} tfidf;

static kn_status tfidf_get(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, tfidf *p) {
    memset(p, 0, sizeof *p);
    p->minn = kn_attr_int(cx, n, "min_gram_length", 0);
    p->maxn = kn_attr_int(cx, n, "max_gram_length", 0);
    p->maxskip = kn_attr_int(cx, n, "max_skip_count", 0);
    const char *mode = kn_attr_str(cx, n, "mode", "");
    p->ncounts = kn_attr_ints(cx, n, "ngram_counts", &p->counts);
    p->nidx = kn_attr_ints(cx, n, "ngram_indexes", &p->idx);
    p->nweights = kn_attr_floats(cx, n, "weights", &p->weights);
    int npi = kn_attr_ints(cx, n, "pool_int64s", &p->pool_i);
    int nps = kn_attr_strings(cx, n, "pool_strings", &p->pool_s);
    if (kn_failed(cx)) return cx->status;
    if (!strcmp(mode, "TF"))
        p->mode = 0;
    else if (!strcmp(mode, "IDF"))
        p->mode = 1;
    else if (!strcmp(mode, "TFIDF"))
        p->mode = 2;
    else
        return kn_diag(cx, n, KN_EINVAL, "mode '%s' is not TF, IDF or TFIDF", mode);
    if (p->minn < 1 || p->maxn < p->minn || p->maxskip < 0)
        return kn_diag(cx, n, KN_EINVAL, "bad min_gram_length/max_gram_length/max_skip_count");
    if (p->ncounts < 1 || p->nidx < 1)
        return kn_diag(cx, n, KN_EINVAL, "ngram_counts and ngram_indexes are required");
    if ((npi >= 0) == (nps >= 0))
        return kn_diag(cx, n, KN_EINVAL, "exactly one of pool_int64s and pool_strings is needed");
    p->npool = npi >= 0 ? npi : nps;
    if (npi < 0) p->pool_i = NULL;
    if (nps < 0) p->pool_s = NULL;
    if (p->nweights >= 0 && p->nweights != p->nidx)
        return kn_diag(cx, n, KN_EINVAL, "weights has %d entries, expected %d", p->nweights,
                       p->nidx);
    if (kn_check_dtype(cx, n, in[0], 0, p->pool_s ? KN_DT(STRING) : KN_DT(I32) | KN_DT(I64)))
        return cx->status;
    /* the pool must hold exactly nidx n-grams */
    int64_t total = 0;
    for (int g = 1; g <= p->ncounts; g++) {
        int64_t s = p->counts[g - 1], e = g < p->ncounts ? p->counts[g] : p->npool;
        if (s < 0 || e < s || e > p->npool || (e - s) % g)
            return kn_diag(cx, n, KN_EINVAL, "ngram_counts does not partition the pool");
        total += (e - s) / g;
    }
    if (total != p->nidx)
        return kn_diag(cx, n, KN_EINVAL, "pool holds %lld n-grams but ngram_indexes has %d",
                       (long long)total, p->nidx);
    for (int i = 0; i < p->nidx; i++) {
        if (p->idx[i] < 0) return kn_diag(cx, n, KN_EINVAL, "ngram_indexes has a negative entry");
        if (p->idx[i] + 1 > p->width) p->width = p->idx[i] + 1;
    }
    return KN_OK;
}

static kn_status infer_tfidf(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    tfidf p;
    if (tfidf_get(cx, n, in, &p)) return cx->status;
    const kn_type *x = &in[0]->type;
    if (x->rank < 0) {
        out[0] = kn_type_unknown(KN_F32);
        return KN_OK;
    }
    if (x->rank != 1 && x->rank != 2)
        return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected 1 or 2", x->rank);
    int64_t dims[2] = {x->dims[0], p.width};
    out[0] = x->rank == 1 ? kn_type_make(KN_F32, 1, dims + 1) : kn_type_make(KN_F32, 2, dims);
    if (x->rank == 2) out[0].sym[0] = x->sym[0];
    return KN_OK;
}

/* Whether token at input position a equals pool entry j. */
static int tfidf_tok_eq(const tfidf *p, const kn_tensor *x, int64_t a, int64_t j) {
    if (p->pool_s) return !strcmp(((char **)x->data)[a], p->pool_s[j]);
    return kn_load_i64(x->data, x->type.dtype, (size_t)a) == p->pool_i[j];
}

static kn_status eval_tfidf(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    tfidf p;
    if (tfidf_get(cx, n, in, &p)) return cx->status;
    const kn_tensor *x = in[0];
    int64_t rows = x->type.rank == 2 ? x->type.dims[0] : 1;
    int64_t C = x->type.dims[x->type.rank - 1];
    double *cnt = kn_arena_array(kn_exec_arena(ex), (size_t)p.nidx, sizeof *cnt);
    double *res = kn_arena_array(kn_exec_arena(ex), (size_t)p.width, sizeof *res);
    for (int64_t r = 0; r < rows; r++) {
        memset(cnt, 0, (size_t)p.nidx * sizeof *cnt);
        int64_t base = r * C;
        for (int64_t st = 0; st < C; st++) {
            int64_t gi = 0; /* global index of the first n-gram of length g */
            for (int g = 1; g <= p.ncounts; g++) {
                int64_t s = p.counts[g - 1], e = g < p.ncounts ? p.counts[g] : p.npool;
                if (g >= p.minn && g <= p.maxn) {
                    for (int64_t skip = 0; skip <= (g == 1 ? 0 : p.maxskip); skip++) {
                        if (st + (g - 1) * (skip + 1) >= C) break;
                        for (int64_t j = s; j < e; j += g) {
                            int ok = 1;
                            for (int k = 0; k < g && ok; k++)
                                ok = tfidf_tok_eq(&p, x, base + st + k * (skip + 1), j + k);
                            if (ok) cnt[gi + (j - s) / g] += 1;
                        }
                    }
                }
                gi += (e - s) / g;
            }
        }
        memset(res, 0, (size_t)p.width * sizeof *res);
        for (int i = 0; i < p.nidx; i++) {
            double w = p.nweights > 0 ? p.weights[i] : 1;
            double v = p.mode == 0 ? cnt[i] : p.mode == 1 ? (cnt[i] > 0 ? w : 0) : cnt[i] * w;
            res[p.idx[i]] = v;
        }
        for (int64_t k = 0; k < p.width; k++)
            kn_store_f64(out[0]->data, out[0]->type.dtype, (size_t)(r * p.width + k), res[k]);
    }
    return KN_OK;
}

/* ---- random ---- */

/* dtype attribute (default def) restricted to mask. */
static kn_status dtype_attr(kn_ctx *cx, const kn_node *n, kn_dtype def, unsigned mask,
                            kn_dtype *dt) {
    int64_t v = kn_attr_int(cx, n, "dtype", def);
    if (kn_failed(cx)) return cx->status;
    if (v <= 0 || v >= 32 || !kn_dtype_valid((int)v) || !(mask & (1u << v)))
        return kn_diag(cx, n, KN_EINVAL, "dtype %lld is not allowed here", (long long)v);
    *dt = (kn_dtype)v;
    return KN_OK;
}

static kn_status infer_random(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    (void)in;
    kn_dtype dt = KN_UNDEF;
    if (dtype_attr(cx, n, KN_F32, KN_DT_FLOAT, &dt)) return cx->status;
    const int64_t *shape;
    int r = kn_attr_ints(cx, n, "shape", &shape);
    if (kn_failed(cx)) return cx->status;
    if (r < 0) return kn_diag(cx, n, KN_EINVAL, "attribute 'shape' is required");
    if (r > KN_MAX_RANK) return kn_diag(cx, n, KN_EUNSUPPORTED, "shape has rank %d", r);
    for (int i = 0; i < r; i++)
        if (shape[i] < 0) return kn_diag(cx, n, KN_EINVAL, "shape has a negative dim");
    out[0] = kn_type_make(dt, r, shape);
    return KN_OK;
}

static kn_status infer_random_like(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                   kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_ANY)) return cx->status;
    kn_dtype dt = KN_UNDEF;
    kn_dtype def = kn_dtype_get(in[0]->type.dtype)->is_float ? in[0]->type.dtype : KN_F32;
    if (dtype_attr(cx, n, def, KN_DT_FLOAT, &dt)) return cx->status;
    out[0] = in[0]->type;
    out[0].dtype = dt;
    return KN_OK;
}

static kn_status eval_random(kn_exec *ex, const kn_node *n, int normal, kn_tensor *out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    double p0 = kn_attr_float(cx, n, normal ? "mean" : "low", 0);
    double p1 = kn_attr_float(cx, n, normal ? "scale" : "high", 1);
    if (kn_failed(cx)) return cx->status;
    int64_t cnt = kn_tensor_numel(out);
    for (int64_t i = 0; i < cnt; i++) {
        if (normal) {
            double u1 = 1 - kn_exec_random(ex), u2 = kn_exec_random(ex); /* u1 in (0, 1] */
            double v = p0 + p1 * sqrt(-2 * log(u1)) * cos(2 * 3.14159265358979323846 * u2);
            kn_store_f64(out->data, out->type.dtype, (size_t)i, v);
            continue;
        }
        /* Rounding to the output dtype can carry a draw just below high up to high
         * (probability 2^-12 a draw in f16, 2^-9 in bf16 for [0, 1)): redraw those so
         * values stay in [low, high). The bound only matters when no value of the
         * dtype lies in [low, high); then high is left. */
        int tries = 0;
        do kn_store_f64(out->data, out->type.dtype, (size_t)i, p0 + (p1 - p0) * kn_exec_random(ex));
        while (p1 > p0 && kn_load_f64(out->data, out->type.dtype, (size_t)i) >= p1 && ++tries < 64);
    }
    return KN_OK;
}

static kn_status eval_uniform(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    (void)in;
    return eval_random(ex, n, 0, out[0]);
}
static kn_status eval_normal(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    (void)in;
    return eval_random(ex, n, 1, out[0]);
}

static kn_status infer_bernoulli(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT)) return cx->status;
    kn_dtype dt = KN_UNDEF;
    if (dtype_attr(cx, n, in[0]->type.dtype, KN_DT_NUM | KN_DT(BOOL), &dt)) return cx->status;
    out[0] = in[0]->type;
    out[0].dtype = dt;
    return KN_OK;
}

static kn_status eval_bernoulli(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                kn_tensor **out) {
    (void)n;
    int64_t cnt = kn_tensor_numel(in[0]);
    for (int64_t i = 0; i < cnt; i++) {
        double p = kn_load_f64(in[0]->data, in[0]->type.dtype, (size_t)i);
        kn_store_f64(out[0]->data, out[0]->type.dtype, (size_t)i, kn_exec_random(ex) < p);
    }
    return KN_OK;
}

static kn_status infer_multinomial(kn_ctx *cx, const kn_node *n, kn_tensor *const *in,
                                   kn_type *out) {
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT)) return cx->status;
    kn_dtype dt = KN_UNDEF;
    if (dtype_attr(cx, n, KN_I32, KN_DT(I32) | KN_DT(I64), &dt)) return cx->status;
    int64_t samples = kn_attr_int(cx, n, "sample_size", 1);
    if (kn_failed(cx)) return cx->status;
    if (samples < 1) return kn_diag(cx, n, KN_EINVAL, "sample_size must be positive");
    const kn_type *x = &in[0]->type;
    if (x->rank >= 0 && x->rank != 2)
        return kn_diag(cx, n, KN_EINVAL, "input has rank %d, expected 2", x->rank);
    int64_t dims[2] = {x->rank == 2 ? x->dims[0] : -1, samples};
    out[0] = kn_type_make(dt, 2, dims);
    return KN_OK;
}

/* Input rows are unnormalized log-probabilities; each sample inverts the CDF. */
static kn_status eval_multinomial(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                                  kn_tensor **out) {
    (void)n;
    double *x = kn_tensor_f64s(kn_exec_arena(ex), in[0]);
    int64_t B = in[0]->type.dims[0], C = in[0]->type.dims[1], S = out[0]->type.dims[1];
    for (int64_t b = 0; b < B; b++) {
        double mx = -INFINITY, total = 0;
        for (int64_t c = 0; c < C; c++) mx = fmax(mx, x[b * C + c]);
        for (int64_t c = 0; c < C; c++) total += exp(x[b * C + c] - mx);
        for (int64_t s = 0; s < S; s++) {
            double u = kn_exec_random(ex) * total, acc = 0;
            int64_t c = 0;
            for (; c < C - 1; c++) {
                acc += exp(x[b * C + c] - mx);
                if (u < acc) break;
            }
            kn_store_i64(out[0]->data, out[0]->type.dtype, (size_t)(b * S + s), c);
        }
    }
    return KN_OK;
}

/* ---- optimizers (ai.onnx.preview.training) ---- */

/* Inputs R, T, then nstate+2 groups of k tensors (X, G, states); outputs nstate+1
 * groups (X_new, states_new), each like its X. Sets *k. */
static kn_status infer_optim(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out,
                             int nstate, int *k) {
    int groups = nstate + 2;
    if ((n->nin - 2) % groups || n->nin < 2 + groups)
        return kn_diag(cx, n, KN_EINVAL, "%d inputs: expected 2 + %d * k", n->nin, groups);
    *k = (n->nin - 2) / groups;
    if (n->nout != *k * (nstate + 1))
        return kn_diag(cx, n, KN_EINVAL, "%d outputs, expected %d", n->nout, *k * (nstate + 1));
    if (kn_check_dtype(cx, n, in[0], 0, KN_DT_FLOAT) || kn_check_dtype(cx, n, in[1], 1, KN_DT(I64)))
        return cx->status;
    if (in[0]->type.rank > 0 && kn_type_numel(&in[0]->type) != 1)
        return kn_diag(cx, n, KN_EINVAL, "R must be a scalar");
    for (int i = 2; i < n->nin; i++)
        if (kn_check_dtype(cx, n, in[i], i, KN_DT_FLOAT)) return cx->status;
    for (int g = 0; g <= nstate; g++)
        for (int i = 0; i < *k; i++) {
            const kn_type *x = &in[2 + i]->type;
            int src = g == 0 ? 2 + i : 2 + (g + 1) * *k + i; /* the X or state input */
            if (!kn_type_equal(x, &in[src]->type) && kn_type_static(x) &&
                kn_type_static(&in[src]->type))
                return kn_diag(cx, n, KN_EINVAL, "input %d's shape differs from X%d", src, i + 1);
            out[g * *k + i] = *x;
        }
    return KN_OK;
}

static kn_status infer_adagrad(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    int k;
    return infer_optim(cx, n, in, out, 1, &k);
}
static kn_status infer_momentum(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    int k;
    return infer_optim(cx, n, in, out, 1, &k);
}
static kn_status infer_adam(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    int k;
    return infer_optim(cx, n, in, out, 2, &k);
}

kn_status kn_optim_attrs_get(kn_ctx *cx, const kn_node *n, kn_optim_attrs *a) {
    memset(a, 0, sizeof *a);
    if (n->op == KN_OP_ADAGRAD) {
        a->decay = kn_attr_float(cx, n, "decay_factor", 0);
        a->eps = kn_attr_float(cx, n, "epsilon", 0);
        a->norm = kn_attr_float(cx, n, "norm_coefficient", 0);
    } else if (n->op == KN_OP_MOMENTUM) {
        a->alpha = kn_attr_float(cx, n, "alpha", 0);
        a->beta = kn_attr_float(cx, n, "beta", 0);
        a->norm = kn_attr_float(cx, n, "norm_coefficient", 0);
        const char *mode = kn_attr_str(cx, n, "mode", "standard");
        if (kn_failed(cx)) return cx->status;
        a->nesterov = !strcmp(mode, "nesterov");
        if (!a->nesterov && strcmp(mode, "standard"))
            return kn_diag(cx, n, KN_EINVAL, "mode '%s' is not standard or nesterov", mode);
    } else {
        a->alpha = kn_attr_float(cx, n, "alpha", 0.9f);
        a->beta = kn_attr_float(cx, n, "beta", 0.999f);
        a->eps = kn_attr_float(cx, n, "epsilon", 1e-6f);
        a->norm = kn_attr_float(cx, n, "norm_coefficient", 0);
        a->post = kn_attr_float(cx, n, "norm_coefficient_post", 0);
    }
    return cx->status;
}

static kn_status eval_adagrad(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                              kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_optim_attrs o;
    if (kn_optim_attrs_get(cx, n, &o)) return cx->status;
    int k = (n->nin - 2) / 3;
    double R = kn_tensor_get_f64(in[0], 0), T = (double)kn_load_i64(in[1]->data, KN_I64, 0);
    double r = R / (1 + T * o.decay);
    for (int i = 0; i < k; i++) {
        const kn_tensor *X = in[2 + i], *G = in[2 + k + i], *H = in[2 + 2 * k + i];
        for (int64_t e = 0; e < kn_tensor_numel(X); e++) {
            double g = o.norm * kn_tensor_get_f64(X, e) + kn_tensor_get_f64(G, e);
            double h = kn_tensor_get_f64(H, e) + g * g;
            kn_tensor_set_f64(out[i], e, kn_tensor_get_f64(X, e) - r * g / (sqrt(h) + o.eps));
            kn_tensor_set_f64(out[k + i], e, h);
        }
    }
    return KN_OK;
}

static kn_status eval_momentum(kn_exec *ex, const kn_node *n, kn_tensor *const *in,
                               kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_optim_attrs o;
    if (kn_optim_attrs_get(cx, n, &o)) return cx->status;
    int k = (n->nin - 2) / 3;
    double R = kn_tensor_get_f64(in[0], 0);
    int64_t T = kn_load_i64(in[1]->data, KN_I64, 0);
    double beta_adj = T > 0 ? o.beta : 1;
    for (int i = 0; i < k; i++) {
        const kn_tensor *X = in[2 + i], *G = in[2 + k + i], *V = in[2 + 2 * k + i];
        for (int64_t e = 0; e < kn_tensor_numel(X); e++) {
            double g = o.norm * kn_tensor_get_f64(X, e) + kn_tensor_get_f64(G, e);
            double v = o.alpha * kn_tensor_get_f64(V, e) + beta_adj * g;
            kn_tensor_set_f64(out[i], e,
                              kn_tensor_get_f64(X, e) - R * (o.nesterov ? g + o.alpha * v : v));
            kn_tensor_set_f64(out[k + i], e, v);
        }
    }
    return KN_OK;
}

static kn_status eval_adam(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_optim_attrs o;
    if (kn_optim_attrs_get(cx, n, &o)) return cx->status;
    int k = (n->nin - 2) / 4;
    double R = kn_tensor_get_f64(in[0], 0);
    int64_t T = kn_load_i64(in[1]->data, KN_I64, 0);
    double r = T > 0 ? R * sqrt(1 - pow(o.beta, (double)T)) / (1 - pow(o.alpha, (double)T)) : R;
    for (int i = 0; i < k; i++) {
        const kn_tensor *X = in[2 + i], *G = in[2 + k + i];
        const kn_tensor *V = in[2 + 2 * k + i], *H = in[2 + 3 * k + i];
        for (int64_t e = 0; e < kn_tensor_numel(X); e++) {
            double g = o.norm * kn_tensor_get_f64(X, e) + kn_tensor_get_f64(G, e);
            double v = o.alpha * kn_tensor_get_f64(V, e) + (1 - o.alpha) * g;
            double h = o.beta * kn_tensor_get_f64(H, e) + (1 - o.beta) * g * g;
            double x = kn_tensor_get_f64(X, e) - r * (v / (sqrt(h) + o.eps));
            kn_tensor_set_f64(out[i], e, (1 - o.post) * x);
            kn_tensor_set_f64(out[k + i], e, v);
            kn_tensor_set_f64(out[2 * k + i], e, h);
        }
    }
    return KN_OK;
}

const kn_opimpl kn_ops_misc[] = {
    {KN_OP_NEGATIVELOGLIKELIHOODLOSS, infer_nll, eval_nll},
    {KN_OP_SOFTMAXCROSSENTROPYLOSS, infer_sce, eval_sce},
    {KN_OP_STRINGCONCAT, infer_strconcat, eval_strconcat},
    {KN_OP_STRINGNORMALIZER, infer_strnorm, eval_strnorm},
    {KN_OP_STRINGSPLIT, infer_strsplit, eval_strsplit},
    {KN_OP_REGEXFULLMATCH, infer_regex, eval_regex},
    {KN_OP_TFIDFVECTORIZER, infer_tfidf, eval_tfidf},
    {KN_OP_RANDOMUNIFORM, infer_random, eval_uniform},
    {KN_OP_RANDOMNORMAL, infer_random, eval_normal},
    {KN_OP_RANDOMUNIFORMLIKE, infer_random_like, eval_uniform},
    {KN_OP_RANDOMNORMALLIKE, infer_random_like, eval_normal},
    {KN_OP_BERNOULLI, infer_bernoulli, eval_bernoulli},
    {KN_OP_MULTINOMIAL, infer_multinomial, eval_multinomial},
    {KN_OP_ADAGRAD, infer_adagrad, eval_adagrad},
    {KN_OP_MOMENTUM, infer_momentum, eval_momentum},
    {KN_OP_ADAM, infer_adam, eval_adam},
    {KN_OP_COUNT, 0, 0},
};
