/* Register-tiled lowerings of the dense products (ir/lower/tile.c), used by the nn
 * group's Conv, Gemm and MatMul lowerings (ir/lower/nn.c) when the target has a vector
 * width and the operands suit them; each returns false, having emitted nothing, when
 * they do not, and the caller lowers the plain loop nest instead. */
#ifndef KN_LOWER_TILE_H
#define KN_LOWER_TILE_H

#include "ir/kir.h"
#include "ir/ops/nn_attrs.h"

/* Conv (not transposed) over window w with `group` groups. */
bool kt_conv(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out,
             const kn_window *w, int64_t group);
/* MatMul with a constant 2-D B. */
bool kt_matmul(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out);
/* Gemm with a constant B and no C, or a constant C of N elements. */
bool kt_gemm(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *const *out, int64_t ta,
             int64_t tb, double alpha, double beta);

#endif
