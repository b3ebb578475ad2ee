/* Group-private interface of ir/ops/image.c, shared with its lowering
 * (ir/lower/image.c): the Resize/Upsample plan, GridSample's and RoiAlign's
 * attributes, read once so the interpreter and the generated code agree. */
#ifndef KN_OPS_IMAGE_ATTRS_H
#define KN_OPS_IMAGE_ATTRS_H

#include "ir/ops.h"

/* ---- Resize, Upsample ---- */

enum { RS_NEAREST, RS_LINEAR, RS_CUBIC };
enum {
    CT_HALF_PIXEL,
    CT_PYTORCH,
    CT_ALIGN_CORNERS,
    CT_ASYMMETRIC,
    CT_TF_NN,
    CT_TF_CROP,
    CT_HALF_PIXEL_SYM
};
/* NM_LEGACY: floor when the axis is upsampled, ceil when downsampled (opset < 11). */
enum { NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL, NM_LEGACY };

typedef struct kn_resize_plan {
    int mode, coord, nearest, exclude_outside;
    int antialias; /* opset 18: linear/cubic filters stretched by 1/scale when downscaling */
    double cubic_a, extrapolation;
    int rank;       /* of X; -1 unknown */
    int known;      /* out[] (and, with X's dims known, scale[]) are known */
    int from_sizes; /* output lengths come from the `sizes` input */
    double scale[KN_MAX_RANK];
    double roi[2 * KN_MAX_RANK]; /* starts, then ends (tf_crop_and_resize) */
    int64_t out[KN_MAX_RANK];    /* output dims, -1 unknown */
} kn_resize_plan;

/* Reads the attributes and the roi/scales/sizes inputs of Resize or Upsample n into p
 * (infer's rules: in[i] may lack data, X's rank may be unknown). known is 0 when an
 * input the plan needs has no data yet. */
kn_status kn_resize_setup(kn_ctx *cx, const kn_node *n, kn_tensor *const *in, kn_resize_plan *p);

/* The most taps an antialiased window may have (a downscale by 1/256 with cubic). */
#define KN_RESIZE_MAX_TAPS 1024

/* The interpolation window on axis a: taps per output coordinate on the edge-padded
 * axis, the first at offset 1 - window/2 from the input coordinate's floor (ratio in
 * (0, 1]): 2 for nearest and linear, 4 for cubic; with antialias on an axis scaled by
 * s < 1, 2*ceil(1/s) (linear) or 4*ceil(1/s) (cubic) as in the ONNX reference. */
int kn_resize_window(const kn_resize_plan *p, int a);

/* Bilinear resizes follow onnxruntime's CPU kernel bit for bit (docs/models.md, "Resize
 * arithmetic"), so that a DynamicQuantizeLinear after them rounds every element as ONNX
 * Runtime does. That kernel serves mode linear without antialias on a 2-D X, or a 4-D X
 * whose axes 0 and 1 (NCHW) or 0 and 3 (NHWC) keep scale 1; with half_pixel,
 * pytorch_half_pixel, align_corners, asymmetric or tf_half_pixel_for_nn coordinates.
 * Returns 1 and its two interpolated axes a0 < a1 when p is such a resize of a float
 * tensor (every other axis maps identically), else 0 (the separable f64 taps above). */
int kn_resize_bilinear_axes(const kn_resize_plan *p, kn_dtype t, int *a0, int *a1);

/* The two taps of output coordinate o on axis a of such a resize (input length len,
 * output length olen), in float32 as onnxruntime computes them: the coordinate
 * (x + 0.5f) / s - 0.5f (or the mode's formula, with the resized length s * len unless
 * `sizes` gave it, as the ONNX specification says; x itself when the scale s is 1)
 * clamped to [0, len - 1], idx[0] = its integer part, idx[1] = min(idx[0] + 1, len - 1),
 * w[0] = |x - idx[1]| and w[1] = |x - idx[0]|, both 0.5 when the indexes are equal. An
 * element is then ((w0a w0b) x00 + (w0a w1b) x01 + (w1a w0b) x10) + (w1a w1b) x11 in
 * float32, each product rounded, no multiply-add fused (a on a0, b on a1). */
void kn_resize_bilinear_taps(const kn_resize_plan *p, int a, int64_t len, int64_t olen, int64_t o,
                             int64_t idx[2], float w[2]);

/* ---- GridSample ---- */

enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

typedef struct kn_grid_params {
    int mode, padding, align_corners;
} kn_grid_params;

kn_status kn_grid_setup(kn_ctx *cx, const kn_node *n, kn_grid_params *g);

/* ---- AffineGrid (opset 20) ---- */

/* The normalized coordinate in [-1, 1] of index i on an axis of s elements. */
double kn_affine_coord(int64_t i, int64_t s, int align_corners);

/* ---- CenterCropPad, Col2Im (opset 18) ---- */

/* CenterCropPad: per axis of x (rank r), the output extent and the input coordinate of
 * output 0 (negative where the output pads: zeros there). */
typedef struct kn_ccp_plan {
    int64_t out[KN_MAX_RANK], start[KN_MAX_RANK];
} kn_ccp_plan;
/* From the shape input's values (count entries, one per axis in `axes`). */
kn_status kn_ccp_plan_make(kn_ctx *cx, const kn_node *n, const kn_type *x, const int64_t *shape,
                           int count, kn_ccp_plan *p);

/* Col2Im on images of r spatial axes (1 <= r <= KN_MAX_RANK - 2): input
 * [N, C*prod(k), prod(l)] -> [N, C, img...]; axis d has image extent img[d], block
 * extent k[d], l[d] block positions, dilation dil[d], stride str[d] and leading pad
 * pad[d]. */
typedef struct kn_col2im_plan {
    int r;
    int64_t n, c, kk, ll; /* batch, channels, prod(k), prod(l) */
    int64_t img[KN_MAX_RANK], k[KN_MAX_RANK], l[KN_MAX_RANK];
    int64_t dil[KN_MAX_RANK], str[KN_MAX_RANK], pad[KN_MAX_RANK];
} kn_col2im_plan;
/* image and block hold r values each. */
kn_status kn_col2im_plan_make(kn_ctx *cx, const kn_node *n, const kn_type *x, const int64_t *image,
                              const int64_t *block, int r, kn_col2im_plan *p);

/* ---- RoiAlign ---- */

typedef struct kn_roialign_attrs {
    int is_max;           /* mode "max", else average */
    int64_t oh, ow, sr;   /* output height and width, sampling_ratio (0: adaptive) */
    double scale, offset; /* spatial_scale; 0.5 for half_pixel coordinates, else 0 */
} kn_roialign_attrs;

/* RoiAlign's attributes as eval reads them (the opset < 16 default coordinate mode is
 * output_half_pixel). Returns cx->status. */
kn_status kn_roialign_attrs_get(kn_ctx *cx, const kn_node *n, kn_roialign_attrs *a);

#endif
