/* Fused epilogues: elementwise work a node applies to its result before storing it.
 *
 * passes/fuse.c folds elementwise consumers (activations, a residual Add, a channel
 * scale) into the node that produces their input, so the result is written once
 * instead of written, read and written again. The node keeps its op; the steps are the
 * STRINGS attribute `kn.epilogue`, one step per string, applied in order to each output
 * element v:
 *
 *   "Relu"               max(v, 0)
 *   "Clip LO HI"         min(max(v, LO), HI)          (ReLU6: Clip 0 6)
 *   "LeakyRelu A"        v < 0 ? A*v : v
 *   "Sigmoid"            1 / (1 + exp(-v))
 *   "HardSigmoid A B"    max(0, min(1, A*v + B))
 *   "HardSwish"          v * max(0, min(1, v/6 + 1/2))
 *   "Silu"               v * sigmoid(v)
 *   "Tanh"               tanh(v)
 *   "Gelu"               v/2 * (1 + erf(v / sqrt 2))
 *   "GeluTanh"           v/2 * (1 + tanh(sqrt(2/pi) * (v + 0.044715 v^3)))
 *   "Add @K" / "Mul @K"  v + x / v * x, x the node's input K broadcast to the output
 *   "Sub @K" / "Div @K"  v - x / v / x
 *   "RSub @K" / "RDiv @K" x - v / x / v
 *   "Neg" "Abs" "Exp" "Log" "Sqrt" "Erf" "Reciprocal"   the unary op on v
 *   "Pow A"              v^A (A a constant; 2 and 3 as products)
 *
 * Operands are extra node inputs after the op's own (the attribute names their index),
 * so use-def chains, liveness and the memory plan see them. passes/fuse.c adds activations
 * and residual Adds; passes/chain.c the arithmetic and unary-math steps; passes/dynq.c a
 * dynamically quantized layer's float tail on MatMulInteger / ConvInteger, whose output is
 * then float32: v starts as float32(int32 accumulator) and every step rounds to float32
 * (the unfused ops' bits). The interpreter applies
 * the steps after the op (kn_epilogue_eval); lowerings and the tile pass apply them
 * to each value they store (kl_epilogue). */
#ifndef KN_EPILOGUE_H
#define KN_EPILOGUE_H

#include "ir/graph.h"

#define KN_ATTR_EPILOGUE "kn.epilogue"

typedef enum kn_epi_op {
    KN_EPI_RELU,
    KN_EPI_CLIP,
    KN_EPI_LEAKYRELU,
    KN_EPI_SIGMOID,
    KN_EPI_HARDSIGMOID,
    KN_EPI_HARDSWISH,
    KN_EPI_SILU,
    KN_EPI_TANH,
    KN_EPI_GELU,
    KN_EPI_GELU_TANH,
    KN_EPI_ADD,
    KN_EPI_MUL,
    KN_EPI_SUB,
    KN_EPI_DIV,
    KN_EPI_RSUB,
    KN_EPI_RDIV,
    KN_EPI_NEG,
    KN_EPI_ABS,
    KN_EPI_EXP,
    KN_EPI_LOG,
    KN_EPI_SQRT,
    KN_EPI_ERF,
    KN_EPI_RECIP,
    KN_EPI_POW,
} kn_epi_op;

enum { KN_EPI_MAX = 8 };

typedef struct kn_epi_step {
    kn_epi_op op;
    double a, b; /* parameters (Clip's bounds, LeakyRelu's alpha, HardSigmoid's, Pow's) */
    int operand; /* Add/Mul: the node input read at the output position; else -1 */
} kn_epi_step;

typedef struct kn_epilogue {
    int n;
    kn_epi_step s[KN_EPI_MAX];
} kn_epilogue;

/* n's epilogue (n->n = 0 when it has none); a malformed attribute is a KN_EINVAL
 * naming the node. */
kn_status kn_epilogue_of(kn_ctx *cx, const kn_node *n, kn_epilogue *e);
/* How many of n's inputs are its op's own (before any epilogue operand). */
int kn_node_op_inputs(const kn_node *n);
/* Whether n may take another epilogue step (not when full, nor a channels-last Conv). */
bool kn_epilogue_room(const kn_node *n);
/* Appends step s to n's epilogue (in g's arena); with an operand value x, x becomes
 * a new input of n and the step reads it. */
void kn_epilogue_append(kn_graph *g, kn_node *n, kn_epi_step s, kn_value *x);
/* The step of an elementwise activation node m whose input is its producer's result
 * (m's input 0), if m has a float form above: fills *s and returns true. Constant
 * attributes and constant Clip bounds only. */
bool kn_epilogue_step_of(kn_ctx *cx, const kn_node *m, kn_epi_step *s);
/* Applies e to y in place (the interpreter), operands from n's inputs in[]. */
kn_status kn_epilogue_eval(kn_ctx *cx, const kn_node *n, const kn_epilogue *e, kn_tensor *y,
                           kn_tensor *const *in);
/* The text form of step s ("Clip 0 6"), for the attribute and printing. */
void kn_epi_step_str(const kn_epi_step *s, char *buf, size_t cap);

#endif
