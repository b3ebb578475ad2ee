/* Group-private interface of ir/ops/nn.c, shared with its lowering (ir/lower/nn.c): the
 * window geometry of convolutions and pools, LpPool's norm order and the parsed Einsum
 * equation, so the interpreter, shape inference and generated code resolve them alike. */
#ifndef KN_OPS_NN_ATTRS_H
#define KN_OPS_NN_ATTRS_H

#include "ir/ops.h"

/* ---- window geometry ---- */

/* Per spatial axis i: input extent in[i] (-1 unknown), kernel k, stride s, dilation d,
 * begin/end pads pb/pe and output extent out (-1 unknown). A forward window reads input
 * o*s - pb + k*d for output o; a transposed one (ConvTranspose: in is the data input,
 * out the result, pads those cropped from the full scatter) reads input t/s with
 * t = o + pb - k*d when s divides t. */
typedef struct kn_window {
    int nsp, transposed;
    int64_t in[KN_MAX_RANK], out[KN_MAX_RANK], k[KN_MAX_RANK], s[KN_MAX_RANK], d[KN_MAX_RANK],
        pb[KN_MAX_RANK], pe[KN_MAX_RANK];
} kn_window;

/* Resolves the window of a conv or pool over input type x (rank >= 3 known). kdims: the
 * kernel's spatial extents from the weights (-1 unknown), or NULL for pools, which need
 * kernel_shape. ceil_mode rounds the output extent up (pools). */
kn_status kn_window_make(kn_ctx *cx, const kn_node *n, const kn_type *x, const int64_t *kdims,
                         int ceil_mode, kn_window *w);
/* One spatial axis (the input's dimension axis) of a forward window, checked against int64
 * (the attributes are the model's): *ek = (k - 1) * d + 1, the dilated kernel's extent, and
 * *full = in + pb + pe, the padded input's; KN_EINVAL naming n and the axis where a sum or
 * product passes int64. kn_window_make and QLinearConv's kn_conv_geom_make share them. */
kn_status kn_window_extent(kn_ctx *cx, const kn_node *n, int axis, int64_t k, int64_t d,
                           int64_t *ek);
kn_status kn_window_padded(kn_ctx *cx, const kn_node *n, int axis, int64_t in, int64_t pb,
                           int64_t pe, int64_t *full);
/* ceil(in / s) for in >= 0 and s >= 1, without the sum in + s - 1 that can pass int64: the
 * output extent of a SAME-padded axis. */
static inline int64_t kn_window_same_out(int64_t in, int64_t s) {
    return in / s + (in % s != 0);
}
/* DeformConv n's checks on its inputs (ranks 3 to 5, channels, groups, offset and mask shapes;
 * static shapes) and its window w; og: offset_group. */
kn_status kn_deform_check(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_window *w,
                          int64_t *og);
/* The window of ConvTranspose n over input x with weights wt (transposed = 1). */
kn_status kn_convt_window(kn_ctx *cx, const kn_node *n, const kn_type *x, const kn_type *wt,
                          kn_window *w);

/* ---- channels-last Conv (passes/layout.c) ---- */

/* A Conv may read its input and write its output channels-last (NHWC, N W C for 1-D,
 * N D H W C for 3-D) instead of ONNX's channels-first order: the INTS attribute
 * `kn.layout` = [x, y], 1 where that value is channels-last. The node still computes
 * the ONNX Conv of the channels-first tensors; only where their elements are stored
 * changes (passes/layout.c folds the NHWC <-> NCHW Transposes of tf2onnx exports into
 * it). A fused epilogue (ir/epilogue.h) applies to the channels-first result, its
 * operands broadcast against the channels-first output shape. */
#define KN_ATTR_LAYOUT "kn.layout"

/* Whether n's input (*xcl) and output (*ycl) are channels-last; false for both when n
 * has no valid `kn.layout` (every node but a Conv or a single-output pool, AveragePool,
 * MaxPool, LpPool and their Global forms, that passes/layout.c rewrote; a pool has no
 * epilogue). */
bool kn_conv_layout(const kn_node *n, bool *xcl, bool *ycl);
/* t (rank >= 3) with its dims moved from channels-last to channels-first order
 * (to_last false: N,H,W,C -> N,C,H,W), or the other way (to_last true). */
kn_type kn_type_channels(const kn_type *t, bool to_last);
/* src's elements moved into dst (same numel; dst's type kn_type_channels(src's type,
 * to_last)). */
void kn_tensor_move_channels(const kn_tensor *src, kn_tensor *dst, bool to_last);

/* The norm order p of LpPool/GlobalLpPool: an int, or a float in opset 1. */
double kn_lp_order(kn_ctx *cx, const kn_node *n);

/* ---- Einsum ---- */

/* Labels: 'A'..'Z' are 0..25 and 'a'..'z' 26..51 (so label order is ASCII order, which
 * the implicit output form sorts by); the broadcast (ellipsis) dims are 52.. ,
 * right-aligned across inputs. */
enum { EIN_LETTERS = 52, EIN_LABELS = 52 + KN_MAX_RANK, EIN_MAX_IN = 32 };

typedef struct kn_einsum {
    int nin, nell; /* inputs; ellipsis dims of the widest ellipsis */
    int rank[EIN_MAX_IN], lab[EIN_MAX_IN][KN_MAX_RANK];
    int orank, olab[KN_MAX_RANK];
    int64_t size[EIN_LABELS]; /* -1 unknown; 1 for unused */
    int used[EIN_LABELS];
} kn_einsum;

/* Parses n's equation against the input types types[0..n->nin) (ranks known; only read
 * when n->nin <= EIN_MAX_IN). */
kn_status kn_einsum_parse(kn_ctx *cx, const kn_node *n, const kn_type *const *types, kn_einsum *p);

#endif
