/* Written by make_qdq.py: the int8 output of kws_int8.onnx for kws_ref_input,
 * computed from the integer operators' definitions (make_qdq.py: qconv_ref). */
#ifndef KWS_INT8_REF_H
#define KWS_INT8_REF_H

#include <stdint.h>

/* clang-format off */
static const int8_t kws_ref_output_int8[12] = {-101, 45, 87, 7, -68, -49, 106, 73, 77, -128, 126, 102};
/* clang-format on */

#endif
