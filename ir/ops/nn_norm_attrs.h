/* Group-private interface of ir/ops/nn_norm.c, shared with its lowering (ir/lower/nn.c):
 * BatchNormalization's mode, MeanVarianceNormalization's axes, LRN's attributes and the
 * softmax family's row view, resolved once. */
#ifndef KN_OPS_NN_NORM_ATTRS_H
#define KN_OPS_NN_NORM_ATTRS_H

#include "ir/ops.h"

/* BatchNormalization's training mode: opset >= 14 says so with training_mode; earlier
 * opsets train when the statistics outputs are requested (and, before opset 7, is_test
 * is 0). */
int kn_bn_training(kn_ctx *cx, const kn_node *n);

/* red[d] = 1 for each axis of MeanVarianceNormalization's axes (default 0, 2, 3) over
 * a rank-`rank` input, else left as is. Reports an axis out of range. */
kn_status kn_mvn_axes(kn_ctx *cx, const kn_node *n, int rank, int *red);

typedef struct kn_lrn_attrs {
    int64_t size;
    double alpha, beta, bias;
} kn_lrn_attrs;

/* LRN's attributes as eval reads them (infer checks size). Returns cx->status. */
kn_status kn_lrn_attrs_get(kn_ctx *cx, const kn_node *n, kn_lrn_attrs *a);

/* The input of Softmax, LogSoftmax or Hardmax (rank, dims) as rows of len elements
 * inner apart, outer * inner of them, around the axis; before opset 13 it is coerced to
 * 2-D at the axis (len: the product of the trailing dims, inner 1). Reports a bad axis. */
kn_status kn_softmax_view(kn_ctx *cx, const kn_node *n, int rank, const int64_t *dims,
                          int64_t *outer, int64_t *len, int64_t *inner);

#endif
