/* Recurrent operators: RNN, GRU and LSTM.
 *
 * The three share one driver: attributes are parsed into a kn_rnn_params record
 * (direction, hidden size, layout, clip, resolved activation functions), and
 * eval runs each direction and batch row through its sequence, one time step at a
 * time, with plain dot products in double. Gate order follows ONNX: GRU z r h,
 * LSTM i o f c (peepholes i o f). Layout 0 is X [seq, batch, input], Y [seq, dir,
 * batch, hidden], Y_h/Y_c [dir, batch, hidden]; layout 1 puts batch first in all
 * of them. Steps past a row's sequence_lens leave Y zero and Y_h at the last valid
 * state. Activation names are matched case-insensitively against a small table;
 * activation_alpha/beta are consumed in order by the functions that take them. */
#include "ir/ops/rnn_attrs.h"

#include <math.h>
#include <string.h>

/* ---- activation functions ---- */

typedef double (*act_fn)(double x, double a, double b);

static double act_relu(double x, double a, double b) {
    (void)a, (void)b;
    return x > 0 ? x : 0;
}
static double act_tanh(double x, double a, double b) {
    (void)a, (void)b;
    return tanh(x);
}
static double act_sigmoid(double x, double a, double b) {
    (void)a, (void)b;
    return 1 / (1 + exp(-x));
}
static double act_affine(double x, double a, double b) {
    return a * x + b;
}
static double act_leakyrelu(double x, double a, double b) {
    (void)b;
    return x >= 0 ? x : a * x;
}
static double act_thresholdedrelu(double x, double a, double b) {
    (void)b;
    return x > a ? x : 0;
}
static double act_scaledtanh(double x, double a, double b) {
    return a * tanh(b * x);
}
static double act_hardsigmoid(double x, double a, double b) {
    return fmax(0, fmin(1, a * x + b));
}
static double act_elu(double x, double a, double b) {
    (void)b;
    return x >= 0 ? x : a * (exp(x) - 1);
}
static double act_softsign(double x, double a, double b) {
    (void)a, (void)b;
    return x / (1 + fabs(x));
}
static double act_softplus(double x, double a, double b) {
    (void)a, (void)b;
    return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x));
}

/* By activation id (A_*). */
static const act_fn act_fns[A_COUNT] = {
    [A_RELU] = act_relu,
    [A_TANH] = act_tanh,
    [A_SIGMOID] = act_sigmoid,
    [A_AFFINE] = act_affine,
    [A_LEAKYRELU] = act_leakyrelu,
    [A_THRESHOLDEDRELU] = act_thresholdedrelu,
    [A_SCALEDTANH] = act_scaledtanh,
    [A_HARDSIGMOID] = act_hardsigmoid,
    [A_ELU] = act_elu,
    [A_SOFTSIGN] = act_softsign,
    [A_SOFTPLUS] = act_softplus,
};

/* nalpha/nbeta: how many of activation_alpha/beta the function consumes (0 or 1). */
static const struct {
    const char *name;
    int id, nalpha, nbeta;
    double alpha, beta; /* defaults, as in the ONNX operators of the same name */
} act_table[] = {
    {"Relu", A_RELU, 0, 0, 0, 0},
    {"Tanh", A_TANH, 0, 0, 0, 0},
    {"Sigmoid", A_SIGMOID, 0, 0, 0, 0},
    {"Affine", A_AFFINE, 1, 1, 1.0, 0.0},
    {"LeakyRelu", A_LEAKYRELU, 1, 0, 0.01, 0},
    {"ThresholdedRelu", A_THRESHOLDEDRELU, 1, 0, 1.0, 0},
    {"ScaledTanh", A_SCALEDTANH, 1, 1, 1.0, 1.0},
    {"HardSigmoid", A_HARDSIGMOID, 1, 1, 0.2, 0.5},
    {"Elu", A_ELU, 1, 0, 1.0, 0},
    {"Softsign", A_SOFTSIGN, 0, 0, 0, 0},
    {"Softplus", A_SOFTPLUS, 0, 0, 0, 0},
};

/* ---- parameters shared by infer, eval and the lowering ---- */

static const int cell_gates[] = {1, 3, 4};
static const int cell_nact[] = {1, 2, 3};
static const char *const cell_default_act[][3] = {
    {"Tanh", NULL, NULL}, {"Sigmoid", "Tanh", NULL}, {"Sigmoid", "Tanh", "Tanh"}};

kn_status kn_rnn_params_get(kn_ctx *cx, const kn_node *n, const kn_type *r, kn_rnn_params *p) {
    memset(p, 0, sizeof *p);
    kn_rnn_cell kind = n->op == KN_OP_RNN ? CELL_RNN : n->op == KN_OP_GRU ? CELL_GRU : CELL_LSTM;
    p->kind = kind;
    p->gates = cell_gates[kind];
    const char *dir = kn_attr_str(cx, n, "direction", "forward");
    p->hidden = kn_attr_int(cx, n, "hidden_size", -1);
    p->layout = (int)kn_attr_int(cx, n, "layout", 0);
    const kn_attr *clip = kn_node_attr(n, "clip");
    p->clip = clip ? kn_attr_float(cx, n, "clip", 0) : 0;
    p->linear_before_reset = (int)kn_attr_int(cx, n, "linear_before_reset", 0);
    p->input_forget = (int)kn_attr_int(cx, n, "input_forget", 0);
    const char *const *names = NULL;
    const float *alphas = NULL, *betas = NULL;
    int nnames = kn_attr_strings(cx, n, "activations", &names);
    int nalphas = kn_attr_floats(cx, n, "activation_alpha", &alphas);
    int nbetas = kn_attr_floats(cx, n, "activation_beta", &betas);
    if (kn_failed(cx)) return cx->status;

    if (!strcmp(dir, "forward")) {
        p->ndir = 1;
    } else if (!strcmp(dir, "reverse")) {
        p->ndir = 1;
        p->reverse[0] = 1;
    } else if (!strcmp(dir, "bidirectional")) {
        p->ndir = 2;
        p->reverse[1] = 1;
    } else {
        return kn_diag(cx, n, KN_EINVAL, "direction '%s' is not forward, reverse or bidirectional",
                       dir);
    }
    if (p->layout != 0 && p->layout != 1)
        return kn_diag(cx, n, KN_EINVAL, "layout %d is not 0 or 1", p->layout);
    if (clip && p->clip <= 0) return kn_diag(cx, n, KN_EINVAL, "clip %g must be positive", p->clip);
    if (p->hidden < 0 && r && r->rank == 3) p->hidden = r->dims[2];
    if (p->hidden == 0) return kn_diag(cx, n, KN_EINVAL, "hidden_size must be positive");

    /* Activations: nact per direction; a single direction's list serves both. */
    int nact = cell_nact[kind];
    if (nnames >= 0 && nnames != nact && nnames != nact * p->ndir)
        return kn_diag(cx, n, KN_EINVAL, "activations has %d entries, expected %d", nnames,
                       nact * p->ndir);
    int ia = 0, ib = 0;
    for (int d = 0; d < p->ndir; d++) {
        for (int k = 0; k < nact; k++) {
            const char *name = cell_default_act[kind][k];
            if (nnames >= 0) name = names[nnames == nact ? k : d * nact + k];
            size_t t = 0, nt = sizeof act_table / sizeof *act_table;
            while (t < nt && !kn_str_eq_nocase(act_table[t].name, name)) t++;
            if (t == nt) return kn_diag(cx, n, KN_EINVAL, "unknown activation '%s'", name);
            kn_rnn_act *a = &p->acts[d][k];
            a->id = act_table[t].id;
            a->a = act_table[t].alpha;
            a->b = act_table[t].beta;
            if (act_table[t].nalpha && ia < nalphas) a->a = alphas[ia++];
            if (act_table[t].nbeta && ib < nbetas) a->b = betas[ib++];
        }
    }
    return KN_OK;
}

/* ---- infer ---- */

static kn_status infer_rnn_common(kn_ctx *cx, const kn_node *n, kn_rnn_cell kind,
                                  kn_tensor *const *in, kn_type *out) {
    for (int i = 0; i < 3; i++)
        if (kn_check_dtype(cx, n, in[i], i, KN_DT_FLOAT)) return cx->status;
    kn_tensor *seq_lens = kn_opt_in(n, in, 4);
    if (seq_lens && kn_check_dtype(cx, n, seq_lens, 4, KN_DT(I32) | KN_DT(I64))) return cx->status;
    kn_rnn_params p;
    if (kn_rnn_params_get(cx, n, in[2] ? &in[2]->type : NULL, &p)) return cx->status;

    const kn_type *x = &in[0]->type, *w = &in[1]->type;
    if (x->rank >= 0 && x->rank != 3)
        return kn_diag(cx, n, KN_EINVAL, "X has rank %d, expected 3", x->rank);
    if (w->rank >= 0 && w->rank != 3)
        return kn_diag(cx, n, KN_EINVAL, "W has rank %d, expected 3", w->rank);
    int64_t seq = -1, batch = -1, hid = p.hidden;
    const char *seq_sym = NULL, *batch_sym = NULL;
    if (x->rank == 3) {
        seq = x->dims[p.layout ? 1 : 0];
        batch = x->dims[p.layout ? 0 : 1];
        seq_sym = x->sym[p.layout ? 1 : 0];
        batch_sym = x->sym[p.layout ? 0 : 1];
    }
    if (hid < 0 && w->rank == 3 && w->dims[1] >= 0) hid = w->dims[1] / cell_gates[kind];
    if (w->rank == 3 && hid >= 0 && w->dims[1] >= 0 && w->dims[1] != cell_gates[kind] * hid)
        return kn_diag(cx, n, KN_EINVAL, "W dim 1 is %lld, expected %d * hidden_size = %lld",
                       (long long)w->dims[1], cell_gates[kind],
                       (long long)(cell_gates[kind] * hid));
    if (w->rank == 3 && w->dims[0] >= 0 && w->dims[0] != p.ndir)
        return kn_diag(cx, n, KN_EINVAL, "W dim 0 is %lld, expected %d directions",
                       (long long)w->dims[0], p.ndir);

    kn_dtype dt = in[0]->type.dtype;
    int64_t ydims[4], hdims[3];
    if (p.layout == 0) {
        int64_t yd[4] = {seq, p.ndir, batch, hid}, hd[3] = {p.ndir, batch, hid};
        memcpy(ydims, yd, sizeof yd);
        memcpy(hdims, hd, sizeof hd);
    } else {
        int64_t yd[4] = {batch, seq, p.ndir, hid}, hd[3] = {batch, p.ndir, hid};
        memcpy(ydims, yd, sizeof yd);
        memcpy(hdims, hd, sizeof hd);
    }
    for (int j = 0; j < n->nout; j++) {
        out[j] = j == 0 ? kn_type_make(dt, 4, ydims) : kn_type_make(dt, 3, hdims);
        /* carry the dim_param names of seq and batch */
        if (j == 0) out[j].sym[p.layout ? 1 : 0] = seq_sym;
        out[j].sym[j == 0 ? (p.layout ? 0 : 2) : (p.layout ? 0 : 1)] = batch_sym;
    }
    return KN_OK;
}

static kn_status infer_rnn(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    return infer_rnn_common(cx, n, CELL_RNN, in, out);
}
static kn_status infer_gru(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    return infer_rnn_common(cx, n, CELL_GRU, in, out);
}
static kn_status infer_lstm(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_type *out) {
    return infer_rnn_common(cx, n, CELL_LSTM, in, out);
}

/* ---- eval ---- */

static double clipped(const kn_rnn_params *p, double v) {
    if (p->clip > 0) v = fmin(p->clip, fmax(-p->clip, v));
    return v;
}

static double apply(const kn_rnn_act *a, const kn_rnn_params *p, double v) {
    return act_fns[a->id](clipped(p, v), a->a, a->b);
}

/* One time step for one batch row of direction d. x: [input]; h, c: [hidden], updated
 * in place. W: [G*H, input], R: [G*H, H], wb/rb: [G*H], P: [3*H] or NULL. Scratch
 * xw, hr, tmp: [G*H] each. */
static void cell_step(const kn_rnn_params *p, int d, int64_t H, int64_t I, const double *x,
                      const double *W, const double *R, const double *wb, const double *rb,
                      const double *P, double *h, double *c, double *xw, double *hr, double *tmp) {
    int64_t GH = cell_gates[p->kind] * H;
    const kn_rnn_act *f = &p->acts[d][0], *g = &p->acts[d][1], *hact = &p->acts[d][2];
    for (int64_t k = 0; k < GH; k++) {
        double s = wb[k], r = rb[k];
        for (int64_t i = 0; i < I; i++) s += W[k * I + i] * x[i];
        for (int64_t j = 0; j < H; j++) r += R[k * H + j] * h[j];
        xw[k] = s;
        hr[k] = r;
    }
    switch (p->kind) {
    case CELL_RNN:
        for (int64_t j = 0; j < H; j++) h[j] = apply(f, p, xw[j] + hr[j]);
        break;
    case CELL_GRU: {
        double *z = tmp, *rh = tmp + H, *hh = tmp + 2 * H; /* z, r (.) h, candidate */
        for (int64_t j = 0; j < H; j++) {
            z[j] = apply(f, p, xw[j] + hr[j]);
            double r = apply(f, p, xw[H + j] + hr[H + j]);
            rh[j] = r * h[j];
            hh[j] = r; /* kept for linear_before_reset */
        }
        for (int64_t j = 0; j < H; j++) {
            double s;
            if (p->linear_before_reset) {
                s = xw[2 * H + j] + hh[j] * hr[2 * H + j];
            } else {
                s = xw[2 * H + j] + rb[2 * H + j];
                for (int64_t k = 0; k < H; k++) s += R[(2 * H + j) * H + k] * rh[k];
            }
            hh[j] = apply(g, p, s);
        }
        for (int64_t j = 0; j < H; j++) h[j] = (1 - z[j]) * hh[j] + z[j] * h[j];
        break;
    }
    case CELL_LSTM:
        for (int64_t j = 0; j < H; j++) {
            double pi = P ? P[j] : 0, po = P ? P[H + j] : 0, pf = P ? P[2 * H + j] : 0;
            double ft = apply(f, p, xw[2 * H + j] + hr[2 * H + j] + pf * c[j]);
            double it = p->input_forget ? 1 - ft : apply(f, p, xw[j] + hr[j] + pi * c[j]);
            double ct = apply(g, p, xw[3 * H + j] + hr[3 * H + j]);
            c[j] = ft * c[j] + it * ct;
            double ot = apply(f, p, xw[H + j] + hr[H + j] + po * c[j]);
            h[j] = ot * act_fns[hact->id](c[j], hact->a, hact->b);
        }
        break;
    }
}

static double *scratch(kn_arena *a, int64_t n) {
    return kn_arena_array(a, (size_t)(n > 0 ? n : 1), sizeof(double));
}

static kn_status eval_rnn_common(kn_exec *ex, const kn_node *n, kn_rnn_cell kind,
                                 kn_tensor *const *in, kn_tensor **out) {
    kn_ctx *cx = kn_exec_ctx(ex);
    kn_arena *a = kn_exec_arena(ex);
    kn_rnn_params p;
    if (kn_rnn_params_get(cx, n, in[2] ? &in[2]->type : NULL, &p)) return cx->status;
    kn_type types[3];
    if (infer_rnn_common(cx, n, kind, in, types)) return cx->status;
    for (int j = 0; j < n->nout; j++) {
        if (out[j]) continue;
        out[j] = kn_exec_tensor(ex, n, types[j].dtype, types[j].rank, types[j].dims);
        if (!out[j]) return cx->status;
    }

    const kn_type *xt = &in[0]->type;
    int64_t S = xt->dims[p.layout ? 1 : 0], B = xt->dims[p.layout ? 0 : 1], I = xt->dims[2];
    int64_t H = p.hidden, G = cell_gates[kind], D = p.ndir;
    if (in[1]->type.dims[2] != I)
        return kn_diag(cx, n, KN_EINVAL, "W dim 2 is %lld, expected input size %lld",
                       (long long)in[1]->type.dims[2], (long long)I);
    const kn_type *rt = &in[2]->type;
    if (rt->rank != 3 || rt->dims[0] != D || rt->dims[1] != G * H || rt->dims[2] != H)
        return kn_diag(cx, n, KN_EINVAL, "R must have shape [%lld, %lld, %lld]", (long long)D,
                       (long long)(G * H), (long long)H);
    kn_tensor *bt = kn_opt_in(n, in, 3), *lt = kn_opt_in(n, in, 4), *h0t = kn_opt_in(n, in, 5);
    kn_tensor *c0t = kind == CELL_LSTM ? kn_opt_in(n, in, 6) : NULL;
    kn_tensor *pt = kind == CELL_LSTM ? kn_opt_in(n, in, 7) : NULL;
    if (bt && kn_tensor_numel(bt) != D * 2 * G * H)
        return kn_diag(cx, n, KN_EINVAL, "B must have %lld elements", (long long)(D * 2 * G * H));
    if (lt && kn_tensor_numel(lt) != B)
        return kn_diag(cx, n, KN_EINVAL, "sequence_lens must have %lld elements", (long long)B);
    if (h0t && kn_tensor_numel(h0t) != D * B * H)
        return kn_diag(cx, n, KN_EINVAL, "initial_h must have %lld elements",
                       (long long)(D * B * H));
    if (c0t && kn_tensor_numel(c0t) != D * B * H)
        return kn_diag(cx, n, KN_EINVAL, "initial_c must have %lld elements",
                       (long long)(D * B * H));
    if (pt && kn_tensor_numel(pt) != D * 3 * H)
        return kn_diag(cx, n, KN_EINVAL, "P must have %lld elements", (long long)(D * 3 * H));

    double *X = kn_tensor_f64s(a, in[0]), *W = kn_tensor_f64s(a, in[1]);
    double *R = kn_tensor_f64s(a, in[2]);
    double *Bv = bt ? kn_tensor_f64s(a, bt) : scratch(a, D * 2 * G * H);
    int64_t *lens = lt ? kn_tensor_i64s(a, lt) : NULL;
    double *H0 = h0t ? kn_tensor_f64s(a, h0t) : NULL, *C0 = c0t ? kn_tensor_f64s(a, c0t) : NULL;
    double *P = pt ? kn_tensor_f64s(a, pt) : NULL;
    double *x = scratch(a, I), *h = scratch(a, H), *c = scratch(a, H);
    double *xw = scratch(a, G * H), *hr = scratch(a, G * H), *tmp = scratch(a, 3 * H);
    if (!Bv || !x || !h || !c || !xw || !hr || !tmp)
        return kn_diag(cx, n, KN_ELIMIT, "scratch memory too large");

    kn_tensor *Y = n->nout > 0 ? out[0] : NULL, *Yh = n->nout > 1 ? out[1] : NULL;
    kn_tensor *Yc = n->nout > 2 ? out[2] : NULL;
    for (int64_t d = 0; d < D; d++) {
        const double *Wd = W + d * G * H * I, *Rd = R + d * G * H * H;
        const double *wb = Bv + d * 2 * G * H, *rb = wb + G * H, *Pd = P ? P + d * 3 * H : NULL;
        for (int64_t b = 0; b < B; b++) {
            /* state index in Y_h / initial_h layout */
            int64_t hs = p.layout ? (b * D + d) * H : (d * B + b) * H;
            for (int64_t j = 0; j < H; j++) {
                h[j] = H0 ? H0[hs + j] : 0;
                c[j] = C0 ? C0[hs + j] : 0;
            }
            int64_t len = lens ? lens[b] : S;
            if (len < 0 || len > S)
                return kn_diag(cx, n, KN_EINVAL, "sequence_lens[%lld] = %lld is out of [0, %lld]",
                               (long long)b, (long long)len, (long long)S);
            for (int64_t s = 0; s < len; s++) {
                int64_t t = p.reverse[d] ? len - 1 - s : s;
                int64_t xs = p.layout ? (b * S + t) * I : (t * B + b) * I;
                for (int64_t i = 0; i < I; i++) x[i] = X[xs + i];
                cell_step(&p, (int)d, H, I, x, Wd, Rd, wb, rb, Pd, h, c, xw, hr, tmp);
                if (!Y) continue;
                int64_t ys = p.layout ? ((b * S + t) * D + d) * H : ((t * D + d) * B + b) * H;
                for (int64_t j = 0; j < H; j++)
                    kn_store_f64(Y->data, Y->type.dtype, (size_t)(ys + j), h[j]);
            }
            for (int64_t j = 0; j < H; j++) {
                if (Yh) kn_store_f64(Yh->data, Yh->type.dtype, (size_t)(hs + j), h[j]);
                if (Yc) kn_store_f64(Yc->data, Yc->type.dtype, (size_t)(hs + j), c[j]);
            }
        }
    }
    return KN_OK;
}

static kn_status eval_rnn(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    return eval_rnn_common(ex, n, CELL_RNN, in, out);
}
static kn_status eval_gru(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    return eval_rnn_common(ex, n, CELL_GRU, in, out);
}
static kn_status eval_lstm(kn_exec *ex, const kn_node *n, kn_tensor *const *in, kn_tensor **out) {
    return eval_rnn_common(ex, n, CELL_LSTM, in, out);
}

const kn_opimpl kn_ops_rnn[] = {
    {KN_OP_RNN, infer_rnn, eval_rnn},
    {KN_OP_GRU, infer_gru, eval_gru},
    {KN_OP_LSTM, infer_lstm, eval_lstm},
    {KN_OP_COUNT, 0, 0},
};
