/* Import of ONNX Runtime's quantized contrib operators (domain com.microsoft), as its
 * static quantizer's QOperator format and tf2onnx's TFLite conversions write them.
 * Each is rewritten, while the model loads, into operators kiln already has (see
 * frontend/onnx_contrib.c and docs/quantization.md, "ONNX Runtime's contrib operators");
 * no com.microsoft node survives the loader. */
#ifndef KN_ONNX_CONTRIB_H
#define KN_ONNX_CONTRIB_H

#include "ir/graph.h"

#define KN_MS_DOMAIN "com.microsoft"

/* One com.microsoft operator kiln imports: its ONNX name and input and output counts. */
typedef struct kn_contrib_op {
    const char *name;
    int min_in, max_in; /* max 255: variadic */
    unsigned required;  /* bit i: input i may not be omitted */
    const char *as;     /* what it becomes, for docs/operators.md */
} kn_contrib_op;

/* The table, sorted by name; *n its length. Static storage. */
const kn_contrib_op *kn_contrib_ops(int *n);
/* The operator op_type of domain com.microsoft, or NULL when kiln does not import it. */
const kn_contrib_op *kn_contrib_find(const char *op_type);
/* The names kiln imports, comma-separated, for messages: written to buf (size bytes,
 * cut if short), which it returns. */
const char *kn_contrib_names(char *buf, size_t size);
/* A node of g's arena that is not in g's node list, holding a contrib operator's
 * inputs, outputs and (filled by the caller) attributes. */
kn_node *kn_contrib_node(kn_graph *g, const char *name, const char *op_type, int nin, kn_value **in,
                         int nout, kn_value **out);
/* Appends to g the nodes that compute contrib node n (made by kn_contrib_node, its
 * inputs defined, its outputs not yet produced), writing n's outputs. Reports a bad
 * node (arity, attributes) through cx. */
kn_status kn_contrib_expand(kn_ctx *cx, kn_graph *g, const kn_node *n);

#endif
