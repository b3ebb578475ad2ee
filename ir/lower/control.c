/* Lowerings of control flow to C control flow: If becomes if/else around the two
 * branches lowered inline (a branch that static inference found invalid for the
 * compiled shapes becomes a run-time error, KN_STATUS_INVALID_BRANCH); Loop becomes a while loop
 * over the body lowered inline, with the loop-carried values kept in the node's output buffers
 * between iterations. Scan outputs of Loop need a trip count known at compile time, which static
 * shape inference does not provide (the body's condition may end the loop early), so a Loop with
 * scan outputs is refused before lowering. */
#include "ir/kir.h"

/* One branch of an If inline, or, when it cannot run for the compiled shapes (static
 * inference failed inside it), a run-time error and a warning naming it. */
static kn_status branch(kn_lower *L, const kn_node *n, const kn_graph *g, const char *which,
                        kn_kbuf *const *out) {
    if (!g->invalid) return kl_subgraph(L, g, NULL, out);
    kn_warn(kl_ctx(L), n,
            "%s cannot run with these input shapes (%s); compiled code returns status %d if it "
            "is taken",
            which, g->invalid, KN_STATUS_INVALID_BRANCH);
    kl_fail(L, KN_STATUS_INVALID_BRANCH);
    return KN_OK;
}

static kn_status lower_if(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_graph *then_g = kn_attr_graph(cx, n, "then_branch");
    kn_graph *else_g = kn_attr_graph(cx, n, "else_branch");
    if (!then_g || !else_g) return kn_diag(cx, n, KN_EINVAL, "needs then_branch and else_branch");
    kl_if(L, kx_cast(L, KN_BOOL, kx_load(L, in[0], kx_int(L, 0))));
    if (branch(L, n, then_g, "then_branch", out)) return cx->status;
    kl_else(L);
    if (branch(L, n, else_g, "else_branch", out)) return cx->status;
    kl_end(L);
    return KN_OK;
}

/* i = 0; cond = cond_in; while (i < M && cond) { body(i, cond, carried...);
 * cond = body cond; carried = body carried; i++ } */
static kn_status lower_loop(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_graph *body = kn_attr_graph(cx, n, "body");
    if (!body) return kn_diag(cx, n, KN_EINVAL, "needs a body");
    int nc = n->nin - 2;
    if (n->nout != nc)
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "Loop scan outputs need a trip count known at compile time");
    kn_kbuf *iter = kl_scratch(L, KN_I64, 1), *cond = kl_scratch(L, KN_BOOL, 1);
    kn_kbuf *bin[258] = {iter, cond}, *bout[258] = {cond};
    for (int j = 0; j < nc; j++) { /* the carried state lives in the outputs */
        kl_copy(L, out[j], kx_int(L, 0), in[2 + j], kx_int(L, 0), kx_int(L, out[j]->numel));
        bin[2 + j] = bout[1 + j] = out[j];
    }
    kn_kx *max =
        in[0] ? kx_cast(L, KN_I64, kx_load(L, in[0], kx_int(L, 0))) : kx_const(L, KN_I64, 9.2e18);
    kl_store(L, cond, kx_int(L, 0),
             in[1] ? kx_cast(L, KN_BOOL, kx_load(L, in[1], kx_int(L, 0)))
                   : kx_const(L, KN_BOOL, 1));
    int i = kl_decl(L, KN_I64, kx_int(L, 0));
    kl_while(L, kx_bin(L, KX_LAND, kx_bin(L, KX_LT, kx_var(L, i), max),
                       kx_cast(L, KN_BOOL, kx_load(L, cond, kx_int(L, 0)))));
    kl_store(L, iter, kx_int(L, 0), kx_var(L, i));
    if (kl_subgraph(L, body, bin, bout)) return cx->status;
    kl_set(L, i, kx_bin(L, KX_ADD, kx_var(L, i), kx_int(L, 1)));
    kl_end(L);
    return KN_OK;
}

/* Copies between a contiguous slice buffer and slice `pos` along axis ax of buffer x
 * (after `batch` leading entries of the outermost dim when b >= 0): to_x selects the
 * direction. */
static void copy_slice(kn_lower *L, kn_kbuf *x, int ax, kn_kx *b, kn_kx *pos, kn_kbuf *slice,
                       bool to_x) {
    int first = b ? 1 : 0; /* Scan-8: dim 0 is the batch */
    int64_t outer = 1, inner = 1;
    for (int d = first; d < ax; d++) outer *= x->dims[d];
    for (int d = ax + 1; d < x->rank; d++) inner *= x->dims[d];
    int64_t len = x->dims[ax], per_batch = outer * len * inner;
    int o = kl_for(L, outer), i = kl_for(L, inner);
    kn_kx *xo =
        kx_bin(L, KX_MUL, kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_var(L, o), kx_int(L, len)), pos),
               kx_int(L, inner));
    xo = kx_bin(L, KX_ADD, xo, kx_var(L, i));
    if (b) xo = kx_bin(L, KX_ADD, xo, kx_bin(L, KX_MUL, b, kx_int(L, per_batch)));
    kn_kx *so = kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_var(L, o), kx_int(L, inner)), kx_var(L, i));
    if (to_x)
        kl_store(L, x, xo, kx_load(L, slice, so));
    else
        kl_store(L, slice, so, kx_load(L, x, xo));
    kl_end_n(L, 2);
}

static int64_t list_at(const int64_t *v, int n, int i) {
    return v && i < n ? v[i] : 0;
}

/* for each batch entry (Scan-8) { state = initial; for t in [0, len) { slices of the
 * scan inputs at t (or len-1-t); body; state = body state; scan outputs at t } } */
static kn_status lower_scan(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                            kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_graph *body = kn_attr_graph(cx, n, "body");
    int64_t m = kn_attr_int(cx, n, "num_scan_inputs", -1);
    if (kn_failed(cx)) return cx->status;
    int first = n->opset < 9 ? 1 : 0, nin = (int)m, nstate = n->nin - first - nin,
        nout = n->nout - nstate;
    if (!body || nin < 1 || nstate < 0 || nout < 0 || nstate + nin > 256 || nstate + nout > 256)
        return kn_diag(cx, n, KN_EINVAL, "malformed Scan");
    if (first && in[0])
        return kn_diag(cx, n, KN_EUNSUPPORTED,
                       "Scan-8 sequence_lens is not supported by code generation");
    const int64_t *in_dirs, *in_axes, *out_axes, *out_dirs;
    int nid = kn_attr_ints(cx, n, first ? "directions" : "scan_input_directions", &in_dirs);
    int nia = kn_attr_ints(cx, n, "scan_input_axes", &in_axes);
    int noa = kn_attr_ints(cx, n, "scan_output_axes", &out_axes);
    int nod = kn_attr_ints(cx, n, "scan_output_directions", &out_dirs);
    if (kn_failed(cx)) return cx->status;
    int ax_in[256], ax_out[256];
    for (int j = 0; j < nin; j++) {
        const kn_kbuf *x = in[first + nstate + j];
        if (kn_axis(cx, n, list_at(in_axes, nia, j), x->rank - first, 0, &ax_in[j]))
            return cx->status;
        ax_in[j] += first;
    }
    for (int k = 0; k < nout; k++) {
        const kn_kbuf *y = out[nstate + k];
        if (kn_axis(cx, n, list_at(out_axes, noa, k), y->rank - first, 0, &ax_out[k]))
            return cx->status;
        ax_out[k] += first;
    }
    int64_t len = in[first + nstate]->dims[ax_in[0]];
    int64_t batch = first ? in[first + nstate]->dims[0] : 1;
    kn_kbuf *bin[256], *bout[256];
    for (int j = 0; j < nstate; j++) /* the state, without the batch dim */
        bin[j] = bout[j] = kl_scratch(L, out[j]->dtype, out[j]->numel / batch);
    for (int j = 0; j < nin; j++) {
        const kn_kbuf *x = in[first + nstate + j];
        bin[nstate + j] = kl_scratch(L, x->dtype, x->numel / batch / x->dims[ax_in[j]]);
    }
    for (int k = 0; k < nout; k++) {
        const kn_kbuf *y = out[nstate + k];
        bout[nstate + k] = kl_scratch(L, y->dtype, y->numel / batch / y->dims[ax_out[k]]);
    }
    int b = kl_for(L, batch);
    kn_kx *bx = first ? kx_var(L, b) : NULL;
    for (int j = 0; j < nstate; j++) {
        int64_t e = bin[j]->numel;
        kl_copy(L, bin[j], kx_int(L, 0), in[first + j],
                kx_bin(L, KX_MUL, kx_var(L, b), kx_int(L, e)), kx_int(L, e));
    }
    int t = kl_for(L, len);
    for (int j = 0; j < nin; j++) {
        kn_kx *pos = list_at(in_dirs, nid, j) ? kx_bin(L, KX_SUB, kx_int(L, len - 1), kx_var(L, t))
                                              : kx_var(L, t);
        copy_slice(L, in[first + nstate + j], ax_in[j], bx, pos, bin[nstate + j], false);
    }
    if (kl_subgraph(L, body, bin, bout)) return cx->status;
    for (int k = 0; k < nout; k++) {
        kn_kx *pos = list_at(out_dirs, nod, k) ? kx_bin(L, KX_SUB, kx_int(L, len - 1), kx_var(L, t))
                                               : kx_var(L, t);
        copy_slice(L, out[nstate + k], ax_out[k], bx, pos, bout[nstate + k], true);
    }
    kl_end(L);
    for (int j = 0; j < nstate; j++) {
        int64_t e = bin[j]->numel;
        kl_copy(L, out[j], kx_bin(L, KX_MUL, kx_var(L, b), kx_int(L, e)), bin[j], kx_int(L, 0),
                kx_int(L, e));
    }
    kl_end(L);
    return KN_OK;
}

const kn_oplower kn_lower_control[] = {
    {KN_OP_SCAN, lower_scan},
    {KN_OP_IF, lower_if},
    {KN_OP_LOOP, lower_loop},
    {KN_OP_COUNT, 0},
};
