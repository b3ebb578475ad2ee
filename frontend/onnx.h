/* ONNX frontend: the only code that parses ONNX protobuf.
 *
 * Loading builds a kn_graph from a ModelProto: graph inputs (minus those that are
 * also initializers: those become constants), initializers (including external
 * data read from files beside the model; sparse ones densified), nodes sorted into a
 * topological order (a real cycle is refused with its path), calls of model-local
 * functions (ModelProto.functions) inlined, attributes of every kind, and subgraphs
 * of If/Loop/Scan bodies. Warnings (cx->warn): nodes out of order, unused
 * initializers. Types of
 * inner values are left unknown for shape inference. Every failure returns a
 * negative status with a message naming the file and node. */
#ifndef KN_ONNX_H
#define KN_ONNX_H

#include "ir/graph.h"

/* Highest ai.onnx opset whose semantics kiln implements, and the newest IR version. */
#define KN_ONNX_MAX_OPSET 21
#define KN_ONNX_MAX_IR_VERSION 10
/* ... and of ai.onnx.ml (no ML operator is implemented yet) and of
 * ai.onnx.preview.training. */
#define KN_ONNX_MAX_OPSET_ML 3
#define KN_ONNX_MAX_OPSET_TRAINING 1

/* Loads the model at path; *out is a new graph (kn_graph_destroy) on success. */
kn_status kn_onnx_load_file(kn_ctx *cx, const char *path, kn_graph **out);
/* Loads from memory; external data is resolved relative to base_dir (NULL: refused). */
kn_status kn_onnx_load_memory(kn_ctx *cx, const void *buf, size_t len, const char *base_dir,
                              const char *display_name, kn_graph **out);

/* Decodes a serialized TensorProto, or a SequenceProto / OptionalProto when kind
 * says so, into a tensor allocated in a. */
kn_status kn_onnx_decode_value(kn_ctx *cx, kn_arena *a, const void *buf, size_t len, kn_kind kind,
                               kn_tensor **out);
/* Serializes a tensor as TensorProto named name; *buf is malloc'd (caller frees). */
kn_status kn_onnx_encode_tensor(kn_ctx *cx, const kn_tensor *t, const char *name, void **buf,
                                size_t *len);

/* Writes the root graph g as an ONNX model to path (frontend/onnx_write.c): nodes,
 * constants read by them as initializers, typed inputs and outputs, the model's opsets.
 * Graphs with subgraphs, sequences or kiln's own attributes are refused. Written to a
 * temporary name and renamed, so a failure leaves no partial file. */
kn_status kn_onnx_write_file(kn_ctx *cx, const kn_graph *g, const char *path);

/* Reads a whole file into malloc'd memory (caller frees); reports errors in cx. */
kn_status kn_read_file(kn_ctx *cx, const char *path, void **buf, size_t *len);

#endif
