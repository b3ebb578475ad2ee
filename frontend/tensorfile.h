/* Tensor files: NumPy .npy (format 1.0-3.0, C order, numeric and bool dtypes,
 * little-endian) and ONNX TensorProto / SequenceProto / OptionalProto .pb files.
 * The format is chosen by content (.npy magic) on read and by extension on write. */
#ifndef KN_TENSORFILE_H
#define KN_TENSORFILE_H

#include "ir/tensor.h"
#include "ir/diag.h"

/* Reads path into a tensor allocated in a; kind selects the .pb message type. */
kn_status kn_tensorfile_read(kn_ctx *cx, kn_arena *a, const char *path, kn_kind kind,
                             kn_tensor **out);
/* Parses .npy bytes. */
kn_status kn_npy_decode(kn_ctx *cx, kn_arena *a, const void *buf, size_t len, kn_tensor **out);
/* Writes t to path (.npy unless path ends in .pb) through a temporary file renamed on
 * success, so a failure leaves no partial file. */
kn_status kn_tensorfile_write(kn_ctx *cx, const char *path, const kn_tensor *t);

#endif
