/* Lowerings of control flow to C control flow: If becomes if/else around the two
 * branches lowered inline; Loop becomes a while loop over the body lowered inline,
 * with the loop-carried values kept in the node's output buffers between
 * iterations. Scan outputs of Loop need a trip count known at compile time, which
 * static shape inference does not provide (the body's condition may end the loop
 * early), so a Loop with scan outputs is refused before lowering. */
#include "ir/kir.h"

static kn_status lower_if(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out) {
    kn_ctx *cx = kl_ctx(L);
    kn_graph *then_g = kn_attr_graph(cx, n, "then_branch");
    kn_graph *else_g = kn_attr_graph(cx, n, "else_branch");
    if (!then_g || !else_g) return kn_diag(cx, n, KN_EINVAL, "needs then_branch and else_branch");
    kl_if(L, kx_cast(L, KN_BOOL, kx_load(L, in[0], kx_int(L, 0))));
    if (kl_subgraph(L, then_g, NULL, out)) return cx->status;
    kl_else(L);
    if (kl_subgraph(L, else_g, NULL, out)) return cx->status;
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

const kn_oplower kn_lower_control[] = {
    {KN_OP_IF, lower_if},
    {KN_OP_LOOP, lower_loop},
    {KN_OP_COUNT, 0},
};
