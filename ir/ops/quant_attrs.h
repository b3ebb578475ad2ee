/* Group-private interface of ir/ops/quant.c, shared with its lowering
 * (ir/lower/quant.c): the convolution geometry of ConvInteger and QLinearConv, resolved
 * once from the attributes and the operand shapes. */
#ifndef KN_OPS_QUANT_ATTRS_H
#define KN_OPS_QUANT_ATTRS_H

#include "ir/ops.h"

typedef struct kn_conv_geom {
    int s;                  /* spatial rank */
    int64_t N, C, M, group; /* batch, input channels, output channels */
    int64_t in[KN_MAX_RANK], k[KN_MAX_RANK], out[KN_MAX_RANK];
    int64_t str[KN_MAX_RANK], dil[KN_MAX_RANK], pb[KN_MAX_RANK];
} kn_conv_geom;

/* Reads the Conv attributes for x [N, C, D...] and w [M, C/group, k...]. Output
 * extents of -1 where an input extent is unknown; *known = 0 if a rank is unknown. */
kn_status kn_conv_geom_make(kn_ctx *cx, const kn_node *n, const kn_type *x, const kn_type *w,
                            kn_conv_geom *g, int *known);

#endif
