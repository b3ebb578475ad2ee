/* Post-training static quantization (docs/quantization.md, "Post-training
 * quantization"): calibration on the float graph in the reference interpreter, then
 * QuantizeLinear/DequantizeLinear inserted into the graph so that the `qdq` pass
 * (passes/qdq.c) turns each quantized Conv/MatMul/Gemm into an integer contraction.
 *
 * The steps, each a function below:
 *   1. kn_ptq_plan: the layers (Conv, MatMul, Gemm with constant weights) and the
 *      float values whose ranges are needed: each layer's input, and its output point
 *      (its output, or the output of a Relu or constant Clip that alone reads it).
 *   2. kn_ptq_calibrate: runs the graph on the samples and turns each value's
 *      statistics into a range (min/max, a percentile of |x|, or the threshold of
 *      least KL divergence), then a scale and zero point.
 *   3. kn_ptq_apply: on a graph loaded and prepared the same way, quantizes weights
 *      (int8, symmetric, per output channel), biases (int32 at x_scale * w_scale)
 *      and activations (per tensor, asymmetric, uint8 or int8) of every layer not kept
 *      in float, as QDQ nodes.
 *   4. kn_ptq_measure: SQNR of each layer's output point and of the graph outputs,
 *      quantized graph against float graph, on the samples.
 * Values are matched across graphs by name, so steps 3 and 4 may run on new loads of
 * the model (the CLI loads it once per trial of --quantize auto). */
#ifndef KN_PTQ_H
#define KN_PTQ_H

#include "ir/graph.h"

typedef enum kn_calib_method {
    KN_CALIB_MINMAX = 0,
    KN_CALIB_PERCENTILE, /* the percentile-th percentile of |x| clips the range */
    KN_CALIB_ENTROPY,    /* the clip threshold of least KL divergence (TensorRT) */
} kn_calib_method;

typedef struct kn_ptq_opts {
    kn_calib_method method;
    double percentile; /* KN_CALIB_PERCENTILE: in (0, 100]; 99.99 by default */
    kn_dtype act;      /* activations: KN_U8 (default when 0) or KN_I8 */
} kn_ptq_opts;

/* A float activation whose range calibration measures. */
typedef struct kn_ptq_value {
    const char *name;
    double lo, hi;           /* observed */
    double clip_lo, clip_hi; /* the range quantized (clipped by the method) */
    double scale;            /* float32-representable */
    int zero;                /* in act's range */
    int64_t count;           /* elements seen */
    int64_t *hist;           /* |x| histogram, KN_PTQ_BINS bins over [0, max(|lo|, |hi|)] */
} kn_ptq_value;

#define KN_PTQ_BINS 2048

typedef struct kn_ptq_layer {
    const char *node, *op; /* ONNX node name and op type */
    int x, y;              /* indices in kn_ptq.values: input and output point */
    bool relu;             /* the output point is a Relu or constant Clip after the node */
    bool keep;             /* left in float (--keep-float, --quantize auto) */
    /* set by kn_ptq_apply (when not kept) */
    int64_t channels;
    double ws_min, ws_max; /* weight scales (per output channel) */
    const char *ydq;       /* name of the output point's DequantizeLinear in the quantized graph */
    /* set by kn_ptq_measure */
    double sqnr; /* dB; output point, quantized against float; INFINITY when exact */
} kn_ptq_layer;

/* A quantization plan and its results. Owns its arena: kn_ptq_destroy. */
typedef struct kn_ptq {
    kn_arena *arena;
    kn_ptq_opts opts;
    int nlayers;
    kn_ptq_layer *layers;
    int nvalues;
    kn_ptq_value *values;
    int nsamples;
    double out_sqnr;  /* dB over all graph outputs (kn_ptq_measure) */
    double out_error; /* ||q - f|| / ||f|| over all graph outputs (kn_ptq_measure) */
} kn_ptq;

/* Finds the layers of g (shapes inferred; a root graph). *out is new. */
kn_status kn_ptq_plan(kn_ctx *cx, const kn_graph *g, const kn_ptq_opts *o, kn_ptq **out);
void kn_ptq_destroy(kn_ptq *q);

/* Marks the layers named in the comma-separated list `names` kept in float; a name that
 * is no layer (a node that does not exist, or that has no integer form) is an error
 * listing the layers. */
kn_status kn_ptq_keep(kn_ctx *cx, kn_ptq *q, const char *names);

/* Runs g (the graph kn_ptq_plan saw) on nsamples sets of inputs (samples[s][i] for
 * graph input i) and sets each value's range, scale and zero point. */
kn_status kn_ptq_calibrate(kn_ctx *cx, const kn_graph *g, kn_ptq *q, int nsamples,
                           kn_tensor *const *const *samples);

/* Inserts the QDQ nodes into g for the layers not kept. */
kn_status kn_ptq_apply(kn_ctx *cx, kn_graph *g, kn_ptq *q);

/* Runs the float graph f and the quantized graph qg (after kn_ptq_apply, before or
 * after the qdq pass) on the samples and sets each layer's sqnr, q->out_sqnr and
 * q->out_error. */
kn_status kn_ptq_measure(kn_ctx *cx, const kn_graph *f, const kn_graph *qg, kn_ptq *q, int nsamples,
                         kn_tensor *const *const *samples);

#endif
