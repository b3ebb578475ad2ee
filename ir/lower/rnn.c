/* Lowerings of group 'rnn': RNN, GRU and LSTM.
 *
 * The kernel mirrors the interpreter's driver (ir/ops/rnn.c): directions are
 * unrolled at lowering time (each has its own activations), then for every batch
 * row the state h (and c) lives in kernel scratch, and each time step computes
 * the gate pre-activations xw = W x + Wb and hr = R h + Rb into scratch before the
 * cell update. The step loop runs to the row's sequence_lens (clamped to [0, S]);
 * when sequence_lens is given, Y is zeroed first so skipped steps read 0. Gate order
 * is ONNX's: GRU z r h, LSTM i o f c, peepholes i o f. Arithmetic happens in the
 * compute dtype of X (f32 for f16/bf16). */
#include "ir/kir.h"
#include "ir/ops/rnn_attrs.h"

/* ---- expression helpers ---- */

static kn_kx *I(kn_lower *L, int64_t v) {
    return kx_int(L, v);
}
static kn_kx *V(kn_lower *L, int v) {
    return kx_var(L, v);
}

/* f(v) for activation a in dtype t; clipped first when clip > 0. */
static kn_kx *apply(kn_lower *L, kn_dtype t, const kn_rnn_act *a, double clip, kn_kx *v) {
    if (clip > 0)
        v = kx_bin(L, KX_MIN, kx_const(L, t, clip), kx_bin(L, KX_MAX, kx_const(L, t, -clip), v));
    kn_kx *x = V(L, kl_decl(L, t, v));
    kn_kx *zero = kx_const(L, t, 0), *one = kx_const(L, t, 1);
    kn_kx *A = kx_const(L, t, a->a), *B = kx_const(L, t, a->b);
    switch (a->id) {
    case A_RELU: return kx_select(L, kx_bin(L, KX_GT, x, zero), x, zero);
    case A_TANH: return kx_un(L, KX_TANH, x);
    case A_SIGMOID:
        return kx_bin(L, KX_DIV, one, kx_add(L, one, kx_un(L, KX_EXP, kx_un(L, KX_NEG, x))));
    case A_AFFINE: return kx_add(L, kx_mul(L, A, x), B);
    case A_LEAKYRELU: return kx_select(L, kx_bin(L, KX_GE, x, zero), x, kx_mul(L, A, x));
    case A_THRESHOLDEDRELU: return kx_select(L, kx_bin(L, KX_GT, x, A), x, zero);
    case A_SCALEDTANH: return kx_mul(L, A, kx_un(L, KX_TANH, kx_mul(L, B, x)));
    case A_HARDSIGMOID:
        return kx_bin(L, KX_MAX, zero, kx_bin(L, KX_MIN, one, kx_add(L, kx_mul(L, A, x), B)));
    case A_ELU:
        return kx_select(L, kx_bin(L, KX_GE, x, zero), x,
                         kx_mul(L, A, kx_bin(L, KX_SUB, kx_un(L, KX_EXP, x), one)));
    case A_SOFTSIGN: return kx_bin(L, KX_DIV, x, kx_add(L, one, kx_un(L, KX_ABS, x)));
    default: /* softplus */
        return kx_select(
            L, kx_bin(L, KX_GT, x, zero),
            kx_add(L, x, kx_un(L, KX_LOG, kx_add(L, one, kx_un(L, KX_EXP, kx_un(L, KX_NEG, x))))),
            kx_un(L, KX_LOG, kx_add(L, one, kx_un(L, KX_EXP, x))));
    }
}

/* buf[i] for scratch/input buffers; NULL buffer reads as 0. */
static kn_kx *ld(kn_lower *L, kn_dtype t, kn_kbuf *b, kn_kx *i) {
    return b ? kx_load(L, b, i) : kx_const(L, t, 0);
}

static kn_status lower_rnn(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    kn_rnn_params p;
    if (kn_rnn_params_get(kl_ctx(L), n, NULL, &p)) return kl_ctx(L)->status;
    kn_kbuf *X = in[0], *W = in[1], *R = in[2], *Bb = in[3], *lens = in[4], *H0 = in[5];
    kn_kbuf *C0 = p.kind == CELL_LSTM ? in[6] : NULL, *P = p.kind == CELL_LSTM ? in[7] : NULL;
    kn_kbuf *Y = n->nout > 0 ? out[0] : NULL, *Yh = n->nout > 1 ? out[1] : NULL;
    kn_kbuf *Yc = n->nout > 2 ? out[2] : NULL;
    int64_t S = X->dims[p.layout ? 1 : 0], B = X->dims[p.layout ? 0 : 1], In = X->dims[2];
    int64_t G = p.gates, D = p.ndir, H = R->dims[2], GH = G * H;
    if (W->dims[1] != GH || R->dims[1] != GH)
        return kn_diag(kl_ctx(L), n, KN_EINVAL, "W/R have the wrong shape");
    kn_dtype t = kx_compute_dtype(X->dtype);
    kn_kbuf *h = kl_scratch(L, t, H), *c = p.kind == CELL_LSTM ? kl_scratch(L, t, H) : NULL;
    kn_kbuf *xw = kl_scratch(L, t, GH), *hr = kl_scratch(L, t, GH);
    kn_kbuf *tmp = p.kind == CELL_GRU ? kl_scratch(L, t, 3 * H) : NULL;

    if (Y && lens) {
        int e = kl_for(L, Y->numel);
        kl_store(L, Y, V(L, e), kx_const(L, t, 0));
        kl_end(L);
    }
    for (int d = 0; d < D; d++) {
        const kn_rnn_act *f = &p.acts[d][0], *g = &p.acts[d][1], *ha = &p.acts[d][2];
        int64_t wb0 = d * 2 * GH, rb0 = wb0 + GH; /* bias offsets */
        int b = kl_for(L, B);
        /* state offset in initial_h / Y_h */
        kn_kx *hs = p.layout ? kx_mul(L, kx_add(L, kx_mul(L, V(L, b), I(L, D)), I(L, d)), I(L, H))
                             : kx_mul(L, kx_add(L, I(L, d * B), V(L, b)), I(L, H));
        int j = kl_for(L, H);
        kl_store(L, h, V(L, j), ld(L, t, H0, kx_add(L, hs, V(L, j))));
        if (p.kind == CELL_LSTM) kl_store(L, c, V(L, j), ld(L, t, C0, kx_add(L, hs, V(L, j))));
        kl_end(L);
        kn_kx *len = I(L, S);
        if (lens)
            len = kx_bin(L, KX_MIN,
                         kx_bin(L, KX_MAX, kx_cast(L, KN_I64, kx_load(L, lens, V(L, b))), I(L, 0)),
                         I(L, S));
        int vlen = kl_decl(L, KN_I64, len);
        int s = kl_for_x(L, V(L, vlen));
        int vt = kl_decl(L, KN_I64,
                         p.reverse[d]
                             ? kx_bin(L, KX_SUB, kx_bin(L, KX_SUB, V(L, vlen), I(L, 1)), V(L, s))
                             : V(L, s));
        kn_kx *xs = p.layout
                        ? kx_mul(L, kx_add(L, kx_mul(L, V(L, b), I(L, S)), V(L, vt)), I(L, In))
                        : kx_mul(L, kx_add(L, kx_mul(L, V(L, vt), I(L, B)), V(L, b)), I(L, In));
        int vxs = kl_decl(L, KN_I64, xs);
        /* xw = W x + Wb, hr = R h + Rb */
        int k = kl_for(L, GH);
        int acc = kl_decl(L, t, ld(L, t, Bb, kx_add(L, I(L, wb0), V(L, k))));
        int i = kl_for(L, In);
        kl_set(L, acc,
               kx_fma(L,
                      kx_load(L, W,
                              kx_add(L, kx_mul(L, kx_add(L, I(L, d * GH), V(L, k)), I(L, In)),
                                     V(L, i))),
                      kx_load(L, X, kx_add(L, V(L, vxs), V(L, i))), V(L, acc)));
        kl_end(L);
        kl_store(L, xw, V(L, k), V(L, acc));
        int acr = kl_decl(L, t, ld(L, t, Bb, kx_add(L, I(L, rb0), V(L, k))));
        int jj = kl_for(L, H);
        kl_set(L, acr,
               kx_fma(L,
                      kx_load(L, R,
                              kx_add(L, kx_mul(L, kx_add(L, I(L, d * GH), V(L, k)), I(L, H)),
                                     V(L, jj))),
                      kx_load(L, h, V(L, jj)), V(L, acr)));
        kl_end(L);
        kl_store(L, hr, V(L, k), V(L, acr));
        kl_end(L); /* k */

        /* gate pre-activation q of unit j: xw[q*H + j] + hr[q*H + j] */
#define GATE(q, jv)                                                                                \
    kx_add(L, kx_load(L, xw, kx_add(L, I(L, (q)*H), jv)),                                          \
           kx_load(L, hr, kx_add(L, I(L, (q)*H), jv)))
        switch (p.kind) {
        case CELL_RNN:
            j = kl_for(L, H);
            kl_store(L, h, V(L, j), apply(L, t, f, p.clip, GATE(0, V(L, j))));
            kl_end(L);
            break;
        case CELL_GRU: {
            j = kl_for(L, H);
            kl_store(L, tmp, V(L, j), apply(L, t, f, p.clip, GATE(0, V(L, j))));
            int r = kl_decl(L, t, apply(L, t, f, p.clip, GATE(1, V(L, j))));
            kl_store(L, tmp, kx_add(L, I(L, H), V(L, j)),
                     kx_mul(L, V(L, r), kx_load(L, h, V(L, j))));
            kl_store(L, tmp, kx_add(L, I(L, 2 * H), V(L, j)), V(L, r));
            kl_end(L);
            j = kl_for(L, H);
            int sv;
            if (p.linear_before_reset) {
                sv = kl_decl(L, t,
                             kx_add(L, kx_load(L, xw, kx_add(L, I(L, 2 * H), V(L, j))),
                                    kx_mul(L, kx_load(L, tmp, kx_add(L, I(L, 2 * H), V(L, j))),
                                           kx_load(L, hr, kx_add(L, I(L, 2 * H), V(L, j))))));
            } else {
                sv = kl_decl(L, t,
                             kx_add(L, kx_load(L, xw, kx_add(L, I(L, 2 * H), V(L, j))),
                                    ld(L, t, Bb, kx_add(L, I(L, rb0 + 2 * H), V(L, j)))));
                int kk = kl_for(L, H);
                kl_set(L, sv,
                       kx_fma(L,
                              kx_load(L, R,
                                      kx_add(L,
                                             kx_mul(L, kx_add(L, I(L, d * GH + 2 * H), V(L, j)),
                                                    I(L, H)),
                                             V(L, kk))),
                              kx_load(L, tmp, kx_add(L, I(L, H), V(L, kk))), V(L, sv)));
                kl_end(L);
            }
            kl_store(L, tmp, kx_add(L, I(L, 2 * H), V(L, j)), apply(L, t, g, p.clip, V(L, sv)));
            kl_end(L);
            j = kl_for(L, H);
            int z = kl_decl(L, t, kx_load(L, tmp, V(L, j)));
            kn_kx *hh = kx_load(L, tmp, kx_add(L, I(L, 2 * H), V(L, j)));
            kl_store(L, h, V(L, j),
                     kx_add(L, kx_mul(L, kx_bin(L, KX_SUB, kx_const(L, t, 1), V(L, z)), hh),
                            kx_mul(L, V(L, z), kx_load(L, h, V(L, j)))));
            kl_end(L);
            break;
        }
        case CELL_LSTM: {
            j = kl_for(L, H);
            kn_kx *pi = ld(L, t, P, kx_add(L, I(L, d * 3 * H), V(L, j)));
            kn_kx *po = ld(L, t, P, kx_add(L, I(L, d * 3 * H + H), V(L, j)));
            kn_kx *pf = ld(L, t, P, kx_add(L, I(L, d * 3 * H + 2 * H), V(L, j)));
            int cj = kl_decl(L, t, kx_load(L, c, V(L, j)));
            int ft = kl_decl(
                L, t, apply(L, t, f, p.clip, kx_add(L, GATE(2, V(L, j)), kx_mul(L, pf, V(L, cj)))));
            int it = kl_decl(
                L, t,
                p.input_forget
                    ? kx_bin(L, KX_SUB, kx_const(L, t, 1), V(L, ft))
                    : apply(L, t, f, p.clip, kx_add(L, GATE(0, V(L, j)), kx_mul(L, pi, V(L, cj)))));
            int ct = kl_decl(L, t, apply(L, t, g, p.clip, GATE(3, V(L, j))));
            kl_set(L, cj, kx_add(L, kx_mul(L, V(L, ft), V(L, cj)), kx_mul(L, V(L, it), V(L, ct))));
            kl_store(L, c, V(L, j), V(L, cj));
            int ot = kl_decl(
                L, t, apply(L, t, f, p.clip, kx_add(L, GATE(1, V(L, j)), kx_mul(L, po, V(L, cj)))));
            kl_store(L, h, V(L, j), kx_mul(L, V(L, ot), apply(L, t, ha, 0, V(L, cj))));
            kl_end(L);
            break;
        }
        }
#undef GATE
        if (Y) {
            kn_kx *ys =
                p.layout ? kx_mul(L,
                                  kx_add(L,
                                         kx_mul(L, kx_add(L, kx_mul(L, V(L, b), I(L, S)), V(L, vt)),
                                                I(L, D)),
                                         I(L, d)),
                                  I(L, H))
                         : kx_mul(L,
                                  kx_add(L,
                                         kx_mul(L, kx_add(L, kx_mul(L, V(L, vt), I(L, D)), I(L, d)),
                                                I(L, B)),
                                         V(L, b)),
                                  I(L, H));
            int vys = kl_decl(L, KN_I64, ys);
            j = kl_for(L, H);
            kl_store(L, Y, kx_add(L, V(L, vys), V(L, j)), kx_load(L, h, V(L, j)));
            kl_end(L);
        }
        kl_end(L); /* s */
        if (Yh || Yc) {
            hs = p.layout ? kx_mul(L, kx_add(L, kx_mul(L, V(L, b), I(L, D)), I(L, d)), I(L, H))
                          : kx_mul(L, kx_add(L, I(L, d * B), V(L, b)), I(L, H));
            j = kl_for(L, H);
            if (Yh) kl_store(L, Yh, kx_add(L, hs, V(L, j)), kx_load(L, h, V(L, j)));
            if (Yc) kl_store(L, Yc, kx_add(L, hs, V(L, j)), kx_load(L, c, V(L, j)));
            kl_end(L);
        }
        kl_end(L); /* b */
    }
    return KN_OK;
}

const kn_oplower kn_lower_rnn[] = {
    {KN_OP_RNN, lower_rnn},
    {KN_OP_GRU, lower_rnn},
    {KN_OP_LSTM, lower_rnn},
    {KN_OP_COUNT, 0},
};
