/* The dtype traits table and scalar conversions. */
#include "ir/dtype.h"
#include "ir/diag.h"

#include <math.h>
#include <string.h>

static const kn_dtype_info infos[KN_DTYPE_MAX] = {
    [KN_F32] = {"f32", 4, true, false, true},
    [KN_U8] = {"u8", 1, false, true, false},
    [KN_I8] = {"i8", 1, false, true, true},
    [KN_U16] = {"u16", 2, false, true, false},
    [KN_I16] = {"i16", 2, false, true, true},
    [KN_I32] = {"i32", 4, false, true, true},
    [KN_I64] = {"i64", 8, false, true, true},
    [KN_STRING] = {"string", sizeof(char *), 0, 0, 0},
    [KN_BOOL] = {"bool", 1, false, false, false},
    [KN_F16] = {"f16", 2, true, false, true},
    [KN_F64] = {"f64", 8, true, false, true},
    [KN_U32] = {"u32", 4, false, true, false},
    [KN_U64] = {"u64", 8, false, true, false},
    [KN_BF16] = {"bf16", 2, true, false, true},
    [KN_F8E4M3FN] = {"f8e4m3fn", 1, false, false, true, true},
    [KN_F8E4M3FNUZ] = {"f8e4m3fnuz", 1, false, false, true, true},
    [KN_F8E5M2] = {"f8e5m2", 1, false, false, true, true},
    [KN_F8E5M2FNUZ] = {"f8e5m2fnuz", 1, false, false, true, true},
    [KN_U4] = {"u4", 1, false, true, false, true},
    [KN_I4] = {"i4", 1, false, true, true, true},
};

const kn_dtype_info *kn_dtype_get(int t) {
    static const kn_dtype_info none;
    return t > 0 && t < KN_DTYPE_MAX ? &infos[t] : &none;
}

const char *kn_onnx_type_name(int t) {
    static const char *const names[] = {NULL,
                                        "float",
                                        "uint8",
                                        "int8",
                                        "uint16",
                                        "int16",
                                        "int32",
                                        "int64",
                                        "string",
                                        "bool",
                                        "float16",
                                        "double",
                                        "uint32",
                                        "uint64",
                                        "complex64",
                                        "complex128",
                                        "bfloat16",
                                        "float8e4m3fn",
                                        "float8e4m3fnuz",
                                        "float8e5m2",
                                        "float8e5m2fnuz",
                                        "uint4",
                                        "int4",
                                        "float4e2m1"};
    return t > 0 && t < (int)(sizeof names / sizeof *names) ? names[t] : NULL;
}

kn_dtype kn_dtype_parse(const char *s) {
    static const struct {
        const char *onnx;
        kn_dtype t;
    } alias[] = {{"float", KN_F32},
                 {"uint8", KN_U8},
                 {"int8", KN_I8},
                 {"uint16", KN_U16},
                 {"int16", KN_I16},
                 {"int32", KN_I32},
                 {"int64", KN_I64},
                 {"float16", KN_F16},
                 {"double", KN_F64},
                 {"uint32", KN_U32},
                 {"uint64", KN_U64},
                 {"bfloat16", KN_BF16},
                 {"float8e4m3fn", KN_F8E4M3FN},
                 {"float8e4m3fnuz", KN_F8E4M3FNUZ},
                 {"float8e5m2", KN_F8E5M2},
                 {"float8e5m2fnuz", KN_F8E5M2FNUZ},
                 {"uint4", KN_U4},
                 {"int4", KN_I4}};
    for (int t = 1; t < KN_DTYPE_MAX; t++)
        if (infos[t].name && !strcmp(infos[t].name, s)) return (kn_dtype)t;
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
        if (!strcmp(alias[i].onnx, s)) return alias[i].t;
    return KN_UNDEF;
}

/* ---- float8 (see dtype.h) ---- */

typedef struct f8_format {
    int mbits, bias;
    double max;
    bool uz, inf; /* no -0 and NaN 0x80; E5M2's infinities */
} f8_format;

static const f8_format f8_formats[] = {
    [KN_F8_E4M3FN] = {3, 7, 448.0, false, false},
    [KN_F8_E4M3FNUZ] = {3, 8, 240.0, true, false},
    [KN_F8_E5M2] = {2, 15, 57344.0, false, true},
    [KN_F8_E5M2FNUZ] = {2, 16, 57344.0, true, false},
};

void kn_f8_format(kn_f8_kind k, int *mbits, int *bias, int *maxcode) {
    const f8_format *f = &f8_formats[k];
    *mbits = f->mbits;
    *bias = f->bias;
    *maxcode = k == KN_F8_E4M3FN ? 0x7e : k == KN_F8_E5M2 ? 0x7b : 0x7f;
}

double kn_f8_decode(uint8_t v, kn_f8_kind k) {
    const f8_format *f = &f8_formats[k];
    int mbits = f->mbits, emax = (1 << (7 - mbits)) - 1;
    int e = (v & 0x7f) >> mbits, m = v & ((1 << mbits) - 1);
    bool neg = v & 0x80;
    if (f->uz && v == 0x80) return NAN;
    if (k == KN_F8_E4M3FN && (v & 0x7f) == 0x7f) return NAN;
    if (f->inf && e == emax) return m ? NAN : neg ? -INFINITY : INFINITY;
    double a = e ? ldexp(1.0 + ldexp(m, -mbits), e - f->bias) : ldexp(m, 1 - f->bias - mbits);
    return neg ? -a : a;
}

uint8_t kn_f8_encode(double x, kn_f8_kind k, bool saturate) {
    const f8_format *f = &f8_formats[k];
    uint8_t sign = signbit(x) ? 0x80 : 0, nan = f->uz ? 0x80 : (uint8_t)(sign | 0x7f);
    if (isnan(x)) return nan;
    double a = fabs(x);
    int mbits = f->mbits, emin = 1 - f->bias; /* smallest normal exponent */
    if (isinf(x)) {
        if (f->uz) return 0x80;
        if (!saturate) return f->inf ? (uint8_t)(sign | 0x7c) : nan;
    }
    double r = a;
    if (!isinf(a)) { /* round to nearest even at the spacing of a's binade */
        int e;
        frexp(a, &e); /* a = m * 2^e, m in [0.5, 1): a's binade is 2^(e-1) */
        int q = (e - 1 < emin ? emin : e - 1) - mbits;
        r = ldexp(nearbyint(ldexp(a, -q)), q);
    }
    if (r > f->max) { /* rounded past the largest finite value */
        if (!saturate) return f->inf ? (uint8_t)(sign | 0x7c) : nan;
        r = f->max;
    }
    if (r == 0) return f->uz ? 0 : sign;
    int e;
    frexp(r, &e);
    int be = e - 1 < emin ? 0 : e - 1 + f->bias; /* biased exponent; 0: subnormal */
    int m = be ? (int)ldexp(r, mbits - (e - 1)) - (1 << mbits) : (int)ldexp(r, mbits - emin);
    return (uint8_t)(sign | be << mbits | m);
}

int kn_i4_get(const uint8_t *p, size_t i, bool is_signed) {
    int v = (p[i / 2] >> (i % 2 ? 4 : 0)) & 0xf;
    return is_signed && v >= 8 ? v - 16 : v;
}

void kn_i4_set(uint8_t *p, size_t i, int v) {
    int sh = i % 2 ? 4 : 0;
    p[i / 2] = (uint8_t)((p[i / 2] & ~(0xf << sh)) | (v & 0xf) << sh);
}

float kn_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    float v;
    if (exp == 0)
        v = ldexpf((float)man, -24);
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexpf((float)(man | 0x400), (int)exp - 25);
    return sign ? -v : v;
}

uint16_t kn_f32_to_f16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    if (isnan(f)) return sign | 0x7e00;
    float a = fabsf(f);
    if (a >= 65520.0f) return sign | 0x7c00; /* rounds to infinity */
    if (a < 6.103515625e-05f) {              /* subnormal half: multiple of 2^-24 */
        float q = nearbyintf(a * 16777216.0f);
        return sign | (uint16_t)q;
    }
    int e;
    float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5,1) */
    float mant = nearbyintf((m * 2.0f - 1.0f) * 1024.0f);
    int he = e - 1 + 15;
    if (mant >= 1024.0f) {
        mant = 0;
        he++;
    }
    if (he >= 31) return sign | 0x7c00;
    return sign | (uint16_t)(he << 10) | (uint16_t)mant;
}

float kn_bf16_to_f32(uint16_t h) {
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

uint16_t kn_f32_to_bf16(float f) {
    uint32_t x;
    memcpy(&x, &f, 4);
    if (isnan(f)) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1);
    return (uint16_t)(x >> 16);
}

double kn_load_f64(const void *p, kn_dtype t, size_t i) {
    switch (t) {
    case KN_F32: return ((const float *)p)[i];
    case KN_F64: return ((const double *)p)[i];
    case KN_F16: return kn_f16_to_f32(((const uint16_t *)p)[i]);
    case KN_BF16: return kn_bf16_to_f32(((const uint16_t *)p)[i]);
    case KN_U8:
    case KN_BOOL: return ((const uint8_t *)p)[i];
    case KN_I8: return ((const int8_t *)p)[i];
    case KN_U16: return ((const uint16_t *)p)[i];
    case KN_I16: return ((const int16_t *)p)[i];
    case KN_I32: return ((const int32_t *)p)[i];
    case KN_I64: return (double)((const int64_t *)p)[i];
    case KN_U32: return ((const uint32_t *)p)[i];
    case KN_U64: return (double)((const uint64_t *)p)[i];
    case KN_F8E4M3FN:
    case KN_F8E4M3FNUZ:
    case KN_F8E5M2:
    case KN_F8E5M2FNUZ: return kn_f8_decode(((const uint8_t *)p)[i], kn_f8_kind_of(t));
    case KN_U4: return ((const uint8_t *)p)[i];
    case KN_I4: return ((const int8_t *)p)[i];
    default: return 0;
    }
}

int64_t kn_load_i64(const void *p, kn_dtype t, size_t i) {
    switch (t) {
    case KN_I64: return ((const int64_t *)p)[i];
    case KN_U64: return (int64_t)((const uint64_t *)p)[i];
    case KN_U8:
    case KN_U4:
    case KN_BOOL: return ((const uint8_t *)p)[i];
    case KN_I8:
    case KN_I4: return ((const int8_t *)p)[i];
    case KN_U16: return ((const uint16_t *)p)[i];
    case KN_I16: return ((const int16_t *)p)[i];
    case KN_I32: return ((const int32_t *)p)[i];
    case KN_U32: return ((const uint32_t *)p)[i];
    default: {
        double d = kn_load_f64(p, t, i);
        if (d != d) return INT64_MIN;
        if (d >= 9.2233720368547758e18) return INT64_MAX;
        if (d <= -9.2233720368547758e18) return INT64_MIN;
        return (int64_t)d;
    }
    }
}

uint64_t kn_load_u64(const void *p, kn_dtype t, size_t i) {
    if (t == KN_U64) return ((const uint64_t *)p)[i];
    return (uint64_t)kn_load_i64(p, t, i);
}

void kn_store_i64(void *p, kn_dtype t, size_t i, int64_t v) {
    switch (t) {
    case KN_I64: ((int64_t *)p)[i] = v; break;
    case KN_U64: ((uint64_t *)p)[i] = (uint64_t)v; break;
    case KN_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case KN_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case KN_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case KN_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case KN_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case KN_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case KN_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case KN_U4: ((uint8_t *)p)[i] = (uint8_t)(v & 0xf); break; /* modulo 16, as i8 wraps */
    case KN_I4: ((int8_t *)p)[i] = (int8_t)(((v & 0xf) ^ 8) - 8); break;
    default: kn_store_f64(p, t, i, (double)v); break;
    }
}

void kn_store_u64(void *p, kn_dtype t, size_t i, uint64_t v) {
    if (kn_dtype_get(t)->is_float)
        kn_store_f64(p, t, i, (double)v);
    else
        kn_store_i64(p, t, i, (int64_t)v);
}

/* Float to integer as a C cast, but defined for out-of-range and NaN inputs. */
static int64_t f2i(double v) {
    if (v != v) return 0;
    if (v >= 9.2233720368547758e18) return INT64_MAX;
    if (v <= -9.2233720368547758e18) return INT64_MIN;
    return (int64_t)v;
}

void kn_store_f64(void *p, kn_dtype t, size_t i, double v) {
    switch (t) {
    case KN_F32: ((float *)p)[i] = (float)v; break;
    case KN_F64: ((double *)p)[i] = v; break;
    case KN_F16: ((uint16_t *)p)[i] = kn_f32_to_f16((float)v); break;
    case KN_BF16: ((uint16_t *)p)[i] = kn_f32_to_bf16((float)v); break;
    case KN_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case KN_F8E4M3FN:
    case KN_F8E4M3FNUZ:
    case KN_F8E5M2:
    case KN_F8E5M2FNUZ: ((uint8_t *)p)[i] = kn_f8_encode(v, kn_f8_kind_of(t), true); break;
    case KN_U64:
        ((uint64_t *)p)[i] = v >= 1.8446744073709552e19 ? UINT64_MAX
                             : v >= 9.2233720368547758e18
                                 ? (uint64_t)(v - 9.2233720368547758e18) + (1ull << 63)
                                 : (uint64_t)f2i(v);
        break;
    case KN_STRING:
    case KN_UNDEF: KN_ASSERT(!"numeric store into a non-numeric tensor"); break;
    default: kn_store_i64(p, t, i, f2i(v)); break;
    }
}
