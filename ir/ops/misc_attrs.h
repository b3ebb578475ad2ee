/* Group-private interface of ir/ops/misc.c, shared with its lowering (ir/lower/misc.c):
 * the attributes of the losses and of the training optimizers, read once. */
#ifndef KN_OPS_MISC_ATTRS_H
#define KN_OPS_MISC_ATTRS_H

#include "ir/ops.h"

/* ---- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---- */

typedef enum kn_loss_reduction { RED_NONE, RED_SUM, RED_MEAN } kn_loss_reduction;

typedef struct kn_loss_params {
    kn_loss_reduction red;
    int has_ii; /* ignore_index is given */
    int64_t ignore_index;
} kn_loss_params;

/* Reads reduction and ignore_index; reports an unknown reduction. */
kn_status kn_loss_params_get(kn_ctx *cx, const kn_node *n, kn_loss_params *p);

/* ---- Adagrad, Momentum, Adam ---- */

/* The attributes of optimizer n, with its op's defaults; those it has not are 0. */
typedef struct kn_optim_attrs {
    double alpha, beta, eps, norm; /* norm: norm_coefficient */
    double decay;                  /* Adagrad: decay_factor */
    double post;                   /* Adam: norm_coefficient_post */
    int nesterov;                  /* Momentum: mode is nesterov (else standard) */
} kn_optim_attrs;

/* Reads the attributes of Adagrad, Momentum or Adam node n; reports a bad mode. */
kn_status kn_optim_attrs_get(kn_ctx *cx, const kn_node *n, kn_optim_attrs *a);

#endif
