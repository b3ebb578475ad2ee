/* Group-private interface of ir/ops/rnn.c, shared with its lowering (ir/lower/rnn.c):
 * the attributes of RNN, GRU and LSTM (direction, layout, clip, activations with their
 * alpha/beta) parsed once into kn_rnn_params. */
#ifndef KN_OPS_RNN_ATTRS_H
#define KN_OPS_RNN_ATTRS_H

#include "ir/ops.h"

typedef enum kn_rnn_cell { CELL_RNN, CELL_GRU, CELL_LSTM } kn_rnn_cell;

/* Activation functions, matched case-insensitively by their ONNX operator names. */
enum {
    A_RELU,
    A_TANH,
    A_SIGMOID,
    A_AFFINE,
    A_LEAKYRELU,
    A_THRESHOLDEDRELU,
    A_SCALEDTANH,
    A_HARDSIGMOID,
    A_ELU,
    A_SOFTSIGN,
    A_SOFTPLUS,
    A_COUNT
};

typedef struct kn_rnn_act {
    int id;      /* A_* */
    double a, b; /* alpha, beta (defaults, or consumed from activation_alpha/beta) */
} kn_rnn_act;

typedef struct kn_rnn_params {
    kn_rnn_cell kind;
    int gates;      /* gates per cell: 1, 3 (GRU z r h) or 4 (LSTM i o f c) */
    int ndir;       /* 1 or 2 */
    int reverse[2]; /* per direction: run the sequence backwards */
    int64_t hidden; /* -1 if unknown (static inference) */
    int layout;     /* 0: sequence first, 1: batch first */
    double clip;    /* <= 0: no clipping */
    int linear_before_reset;
    int input_forget;
    kn_rnn_act acts[2][3]; /* per direction: f, g, h */
} kn_rnn_params;

/* Parses the attributes of RNN, GRU or LSTM node n into p. r: R's type, which gives
 * hidden_size when the attribute is absent, or NULL. Reports bad attributes. */
kn_status kn_rnn_params_get(kn_ctx *cx, const kn_node *n, const kn_type *r, kn_rnn_params *p);

#endif
