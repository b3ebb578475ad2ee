/* Element types and their traits. Enum values equal ONNX TensorProto.DataType so
 * the frontend maps them without a table. Conversions go through double (floats)
 * or int64/uint64 (integers): the reference interpreter computes in those. */
#ifndef KN_DTYPE_H
#define KN_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* X(ENUM, value, name, C type, size)
 *
 * The narrow types (ONNX float8 and 4-bit integers) are storage formats, not arithmetic
 * types: Cast, CastLike, QuantizeLinear, DequantizeLinear, constants, data movement, Pad
 * and Where take them (ops with OPF_NARROW), anything else is refused naming the node. A float8
 * element is its 8-bit code (a uint8_t; loads and stores of kn_load_f64/kn_store_f64
 * decode and encode it, saturating). A 4-bit integer is one element per byte in memory
 * (int8_t in [-8, 7], uint8_t in [0, 15]); it is packed two to a byte only in ONNX
 * files (initializers, .pb tensors), which the frontend unpacks and packs. */
#define KN_DTYPES(X)                                                                               \
    X(F32, 1, "f32", float, 4)                                                                     \
    X(U8, 2, "u8", uint8_t, 1)                                                                     \
    X(I8, 3, "i8", int8_t, 1)                                                                      \
    X(U16, 4, "u16", uint16_t, 2)                                                                  \
    X(I16, 5, "i16", int16_t, 2)                                                                   \
    X(I32, 6, "i32", int32_t, 4)                                                                   \
    X(I64, 7, "i64", int64_t, 8)                                                                   \
    X(STRING, 8, "string", char *, sizeof(char *))                                                 \
    X(BOOL, 9, "bool", uint8_t, 1)                                                                 \
    X(F16, 10, "f16", uint16_t, 2)                                                                 \
    X(F64, 11, "f64", double, 8)                                                                   \
    X(U32, 12, "u32", uint32_t, 4)                                                                 \
    X(U64, 13, "u64", uint64_t, 8)                                                                 \
    X(BF16, 16, "bf16", uint16_t, 2)                                                               \
    X(F8E4M3FN, 17, "f8e4m3fn", uint8_t, 1)                                                        \
    X(F8E4M3FNUZ, 18, "f8e4m3fnuz", uint8_t, 1)                                                    \
    X(F8E5M2, 19, "f8e5m2", uint8_t, 1)                                                            \
    X(F8E5M2FNUZ, 20, "f8e5m2fnuz", uint8_t, 1)                                                    \
    X(U4, 21, "u4", uint8_t, 1)                                                                    \
    X(I4, 22, "i4", int8_t, 1)

typedef enum kn_dtype {
    KN_UNDEF = 0,
#define X(E, v, n, c, s) KN_##E = v,
    KN_DTYPES(X)
#undef X
        KN_DTYPE_MAX = 23
} kn_dtype;

typedef struct kn_dtype_info {
    const char *name; /* "f32"; NULL for values that are not a kiln dtype */
    size_t size;      /* bytes per element */
    bool is_float;    /* f16, bf16, f32, f64 */
    bool is_int;      /* signed or unsigned integer, not bool */
    bool is_signed;   /* signed integers and floats (float8 too) */
    bool is_narrow;   /* float8 codes and 4-bit integers (see above) */
} kn_dtype_info;

/* Traits of t; a zeroed record (name NULL) for unknown values. */
const kn_dtype_info *kn_dtype_get(int t);
static inline bool kn_dtype_valid(int t) {
    return kn_dtype_get(t)->name != NULL;
}
static inline const char *kn_dtype_name(int t) {
    const char *n = kn_dtype_get(t)->name;
    return n ? n : "?";
}
/* The ONNX name of TensorProto data type t, kiln dtype or not ("float8e4m3fn", "int4",
 * "complex64", ...); NULL for numbers ONNX does not define (up to IR version 10). */
const char *kn_onnx_type_name(int t);
/* Why a model with such a type is refused, for messages. */
#define KN_UNSUPPORTED_TYPES "kiln has no float4 or complex element types"
/* The ops that take narrow types, for messages. */
#define KN_NARROW_OPS                                                                              \
    "Cast, CastLike, QuantizeLinear, DequantizeLinear, constants, data movement, Pad and Where"
/* Parse "f32" (or ONNX "float"); KN_UNDEF if unknown. */
kn_dtype kn_dtype_parse(const char *s);

/* Element i of buffer p of type t, converted. Strings are not numbers: 0. */
double kn_load_f64(const void *p, kn_dtype t, size_t i);
int64_t kn_load_i64(const void *p, kn_dtype t, size_t i);
uint64_t kn_load_u64(const void *p, kn_dtype t, size_t i);
/* Store v converted to t (float->int truncates toward zero, as a C cast; bool is v != 0;
 * float8 rounds to nearest even and saturates; a 4-bit integer keeps v modulo 16, as the
 * 8-bit ones wrap: Cast's clamping to 4 bits is the caller's). */
void kn_store_f64(void *p, kn_dtype t, size_t i, double v);
void kn_store_i64(void *p, kn_dtype t, size_t i, int64_t v);
void kn_store_u64(void *p, kn_dtype t, size_t i, uint64_t v);

/* ONNX's float8 formats (TensorProto types 17-20; opset 19 Cast): sign, exponent and
 * mantissa bits with the exponent bias:
 *   E4M3FN    1.4.3 bias 7, no infinities, NaN S.1111.111, max 448
 *   E4M3FNUZ  1.4.3 bias 8, no infinities, no -0, NaN 0x80, max 240
 *   E5M2      1.5.2 bias 15, IEEE-like: infinities S.11111.00, NaN S.11111.xx, max 57344
 *   E5M2FNUZ  1.5.2 bias 16, no infinities, no -0, NaN 0x80, max 57344
 * Subnormals (exponent 0) in all. The kinds are in the order of their dtypes. */
typedef enum kn_f8_kind { KN_F8_E4M3FN, KN_F8_E4M3FNUZ, KN_F8_E5M2, KN_F8_E5M2FNUZ } kn_f8_kind;
static inline bool kn_dtype_is_f8(kn_dtype t) {
    return t >= KN_F8E4M3FN && t <= KN_F8E5M2FNUZ;
}
static inline bool kn_dtype_is_4bit(kn_dtype t) {
    return t == KN_U4 || t == KN_I4;
}
static inline kn_f8_kind kn_f8_kind_of(kn_dtype t) {
    return (kn_f8_kind)(t - KN_F8E4M3FN);
}
/* Mantissa bits and exponent bias of a kind, and its largest finite code magnitude. */
void kn_f8_format(kn_f8_kind k, int *mbits, int *bias, int *maxcode);
/* The value of code v (exact; NaN for the NaN codes). */
double kn_f8_decode(uint8_t v, kn_f8_kind k);
/* x rounded to nearest even at the format's precision, then per ONNX Cast's tables:
 * saturate (the attribute's default) clamps a rounded magnitude above the maximum to
 * +-max, and infinities to +-max (E4M3FN, E5M2) or NaN (the FNUZ kinds); without it
 * such values become infinities (E5M2) or NaN (the others). -0 is 0 in the FNUZ kinds,
 * NaN is NaN everywhere. */
uint8_t kn_f8_encode(double x, kn_f8_kind k, bool saturate);
/* Element i of a packed 4-bit buffer (ONNX int4/uint4, opset 21: two to a byte, element
 * 2j in the low nibble of byte j), sign-extended when is_signed; and its store (v is
 * taken modulo 16; the other nibble of the byte is kept). */
int kn_i4_get(const uint8_t *p, size_t i, bool is_signed);
void kn_i4_set(uint8_t *p, size_t i, int v);

/* IEEE half and bfloat16 conversions, round to nearest even. */
float kn_f16_to_f32(uint16_t h);
uint16_t kn_f32_to_f16(float f);
float kn_bf16_to_f32(uint16_t h);
uint16_t kn_f32_to_bf16(float f);

#endif
