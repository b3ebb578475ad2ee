/* Lowerings of group 'quant': linear (de)quantization, DynamicQuantizeLinear, and
 * the integer and quantized-linear MatMul and Conv.
 *
 * Bit-exact with the interpreter (ir/ops/quant.c): zero points are subtracted and
 * dot products accumulated in int64; requantization is
 * `saturate(nearbyint(acc * (sa * sb / sy)) + zy)` in double (round half to even, NaN
 * to 0), or in fixed point for nodes marked so (ir/requant.h, kl_requant_fixed);
 * QuantizeLinear and DynamicQuantizeLinear on float32 divide in float. Where float32
 * gives the same bits as double (8-bit data, float32 scales: see kl_requant and
 * lower_dequantize) the elementwise kernels compute in float32. Scales
 * and zero points are per tensor (one element) or per axis: per `axis` channel for
 * (De)QuantizeLinear, per output channel for the Conv weights, per row of A and
 * per column of B (or broadcast to the operand's shape) for the MatMuls. They are
 * read at run time, so they need not be constants. Padded convolution taps are
 * skipped (they contribute zero after zero-point subtraction); the bounds tests are
 * emitted only on dims where padding can make a tap fall outside. */
#include "ir/epilogue.h"
#include "ir/kir.h"
#include "ir/lower_impl.h"
#include "ir/ops/nn_attrs.h"
#include "ir/ops/quant_attrs.h"
#include "ir/requant.h"
#include "passes/vmath.h"
#include "targets/target.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Lowest and highest values of a (<= 32-bit) integer type, as doubles. */
static void int_range(kn_dtype t, double *lo, double *hi) {
    const kn_dtype_info *di = kn_dtype_get(t);
    double span = ldexp(1.0, kn_dtype_is_4bit(t) ? 4 : (int)di->size * 8);
    *lo = di->is_signed ? -span / 2 : 0;
    *hi = di->is_signed ? span / 2 - 1 : span - 1;
}

/* kl_requant of a scalar f32 v into an integer t of 4 to 16 bits, saturating to [lo, hi] (t's range
 * or within it: QLinearAdd's fused clamp), with the rounding and the saturation in
 * int32: |v| <= 2^22 rounds exactly as kx_round_small
 * (the 1.5 * 2^23 addition, see ir/kir.h) and converts exactly; round(v) + zp then fits
 * int32 and saturates as an integer (SSAT/USAT on Arm). Beyond 2^22 (and +-inf)
 * round(v) + zp lies beyond every 16-bit bound, as |zp| < 2^16: lo for negative v, hi
 * for positive; NaN gives 0. Every conversion reads an in-range value (others are
 * replaced by 0 first), so no backend meets an undefined conversion. On the M4 the
 * common path is a VABS and one compare, the addition, the conversion and a saturation:
 * MobileNetV1's input QuantizeLinear took about 30 instructions an element with the
 * rounding helper kn_rintf and float clamps (docs/firmware.md, "The input quantization"). */
static kn_kx *requant_f32(kn_lower *L, kn_kx *v, kn_kx *zp, kn_dtype t, double lo, double hi) {
    kn_kx *x = kx_var(L, kl_decl(L, KN_F32, v));
    kn_kx *in = kx_bin(L, KX_LE, kx_un(L, KX_ABS, x), kx_const(L, KN_F32, 4194304.0)); /* 2^22 */
    kn_kx *n =
        kx_cast_inrange(L, KN_I32, kx_round_small(L, kx_select(L, in, x, kx_const(L, KN_F32, 0))));
    if (zp) n = kx_bin(L, KX_ADD, n, kx_cast(L, KN_I32, zp));
    kn_kx *klo = kx_const(L, KN_I32, lo), *khi = kx_const(L, KN_I32, hi), *q;
    int bits = kn_dtype_is_4bit(t) ? 4 : (int)kn_dtype_get(t)->size * 8;
    double tlo, thi;
    int_range(t, &tlo, &thi);
    if ((bits == 8 || bits == 16) && lo == tlo && hi == thi) {
        q = kx_sat(L, n, bits, !kn_dtype_get(t)->is_signed);
    } else {
        int nv = kl_decl(L, KN_I32, n);
        q = kx_select(L, kx_bin(L, KX_LT, kx_var(L, nv), klo), klo,
                      kx_select(L, kx_bin(L, KX_GT, kx_var(L, nv), khi), khi, kx_var(L, nv)));
    }
    kn_kx *far = kx_select(L, kx_un(L, KX_ISNAN, x), kx_const(L, KN_I32, 0),
                           kx_select(L, kx_bin(L, KX_LT, x, kx_const(L, KN_F32, 0)), klo, khi));
    return kx_cast(L, t, kx_select(L, in, q, far));
}

/* Whether requantization takes the microcontroller forms: a scalar f32 requant_f32's int32
 * path (the M4's SSAT/USAT, 16 instructions an element against about 30), others
 * requant_clamped. CPUs vectorize requant_rounded better (ResNet-18 int8's 8 adds, x86-64
 * with AVX-512, thread CPU time: 0.063-0.067 ms, 0.095-0.100 ms in the int32 path). All
 * three give the same values. */
static bool requant_int32_path(const kn_lower *L) {
    return L->target && L->target->kind == KN_TARGET_MCU;
}

/* The float form of kl_requant on CPUs and GPUs, v into [lo, hi] within t's range (ft: v's
 * arithmetic type): round(v) + zp, then the clamp to the constant bounds. The same values as
 * requant_clamped, which vectorizes worse on x86 (ResNet-18 int8's 8 adds 0.074-0.078 ms
 * against 0.065-0.067, AVX-512, thread CPU time). */
static kn_kx *requant_rounded(kn_lower *L, kn_kx *v, kn_kx *zp, kn_dtype t, kn_dtype ft, double lo,
                              double hi) {
    kn_kx *r = kx_cast(L, ft, kx_un(L, KX_ROUND, v));
    if (zp) r = kx_bin(L, KX_ADD, r, kx_cast(L, ft, zp));
    int rv = kl_decl_vec(L, ft, kx_lanes(r), r); /* v may be a vector */
    kn_kx *x = kx_var(L, rv), *klo = kx_const(L, ft, lo), *khi = kx_const(L, ft, hi);
    kn_kx *c =
        kx_select(L, kx_bin(L, KX_LT, x, klo), klo, kx_select(L, kx_bin(L, KX_GT, x, khi), khi, x));
    c = kx_select(L, kx_un(L, KX_ISNAN, x), kx_const(L, ft, 0), c);
    /* in [lo, hi] and not NaN by the selects (the bounds are exact in ft up to 32 bits) */
    return kn_dtype_get(t)->size <= 4 ? kx_cast_inrange(L, t, c) : kx_cast(L, t, c);
}

/* The float form of kl_requant on microcontrollers, v into [lo, hi] within t's range (ft:
 * v's arithmetic type): the clamp before the rounding, which then needs no instruction of its
 * own (kx_round_small). */
static kn_kx *requant_clamped(kn_lower *L, kn_kx *v, kn_kx *zp, kn_dtype t, kn_dtype ft, double lo,
                              double hi) {
    int xv = kl_decl_vec(L, ft, kx_lanes(v), kx_cast(L, ft, v)); /* v may be a vector */
    kn_kx *x = kx_var(L, xv), *a = kx_const(L, ft, lo), *b = kx_const(L, ft, hi), *z = NULL;
    if (zp) {
        z = kx_var(L, kl_decl_vec(L, ft, kx_lanes(zp), kx_cast(L, ft, zp)));
        a = kx_bin(L, KX_SUB, a, z);
        b = kx_bin(L, KX_SUB, b, z);
    }
    kn_kx *c = kx_select(L, kx_bin(L, KX_LT, x, a), a, kx_select(L, kx_bin(L, KX_GT, x, b), b, x));
    kn_kx *r = ft == KN_F32 ? kx_round_small(L, c) : kx_un(L, KX_ROUND, c);
    if (z) r = kx_bin(L, KX_ADD, r, z);
    r = kx_select(L, kx_un(L, KX_ISNAN, x), kx_const(L, ft, 0), r);
    /* in [lo, hi] and not NaN by the clamp and the select (the bounds are exact in ft up
     * to 32 bits): an unsaturated conversion (kx_cast_inrange) */
    return kn_dtype_get(t)->size <= 4 ? kx_cast_inrange(L, t, r) : kx_cast(L, t, r);
}

/* saturate(nearbyint(v) + zp) in type t, NaN giving 0; zp may be NULL. Declares locals
 * in the current block. */
/* A float32 v into an 8- or 16-bit type computes in float32 (vectorizes twice as wide),
 * with the same result. v is clamped to [lo - zp, hi - zp] before it is rounded, which
 * gives the same value as saturating round(v) + zp to [lo, hi]: the bounds are integers
 * and rounding is monotonic, so round(min(max(v, a), b)) = min(max(round(v), a), b) for
 * integer a, b; lo - zp, hi - zp and round(c) + zp are small integers, exact in float32
 * (|.| <= 2^17) and double. The clamped value is within 2^17 of 0, so an f32 one rounds as
 * kx_round_small (no test of its magnitude, no copysign: docs/firmware.md, "The input
 * quantization"). NaN passes both compares and gives 0 at the end. */
kn_kx *kl_requant(kn_lower *L, kn_kx *v, kn_kx *zp, kn_dtype t) {
    double lo, hi;
    int_range(t, &lo, &hi);
    kn_dtype ft = v->dtype == KN_F32 && kn_dtype_get(t)->size <= 2 ? KN_F32 : KN_F64;
    if (!requant_int32_path(L)) return requant_rounded(L, v, zp, t, ft, lo, hi);
    if (ft == KN_F32 && kx_lanes(v) == 1) return requant_f32(L, v, zp, t, lo, hi);
    return requant_clamped(L, v, zp, t, ft, lo, hi);
}

kn_kx *kl_requant_fixed(kn_lower *L, kn_kx *acc, kn_kx *mult, kn_kx *shift, kn_kx *zp, kn_dtype t) {
    double lo, hi;
    int_range(t, &lo, &hi);
    return kl_requant_fixed_range(L, acc, mult, shift, zp, t, (int64_t)lo, (int64_t)hi);
}

kn_kx *kl_requant_fixed_range(kn_lower *L, kn_kx *acc, kn_kx *mult, kn_kx *shift, kn_kx *zp,
                              kn_dtype t, int64_t lo, int64_t hi) {
    kn_kx *a = kx_cast(L, KN_I64, acc);
    if (kn_dtype_get(acc->dtype)->size > 4 || acc->dtype == KN_U32)
        a = kx_bin(L, KX_MIN, kx_bin(L, KX_MAX, a, kx_int(L, INT32_MIN)), kx_int(L, INT32_MAX));
    /* acc may be a vector (mult and shift scalars or vectors of its lanes) */
    kn_kx *pv = kx_mul(L, a, kx_cast(L, KN_I64, mult));
    int p = kl_decl_vec(L, KN_I64, kx_lanes(pv), pv);
    int s = kl_decl_vec(L, KN_I64, kx_lanes(shift), kx_cast(L, KN_I64, shift));
    /* (p + 2^(s-1) - 1 + (floor(p / 2^s) & 1)) >> s: p / 2^s rounded half to even */
    kn_kx *odd = kx_bin(L, KX_AND, kx_bin(L, KX_SHR, kx_var(L, p), kx_var(L, s)), kx_int(L, 1));
    kn_kx *half = kx_bin(L, KX_SHL, kx_int(L, 1), kx_sub(L, kx_var(L, s), kx_int(L, 1)));
    kn_kx *r = kx_add(L, kx_var(L, p), kx_add(L, kx_sub(L, half, kx_int(L, 1)), odd));
    r = kx_bin(L, KX_SHR, r, kx_var(L, s));
    if (zp) r = kx_add(L, r, kx_cast(L, KN_I64, zp));
    r = kx_bin(L, KX_MIN, kx_bin(L, KX_MAX, r, kx_int(L, lo)), kx_int(L, hi));
    return kx_cast(L, t, r);
}

/* The range fixed-point node n stores outputs of type t in (kn_fixed_clamp). */
static void fixed_range(const kn_node *n, kn_dtype t, int64_t *lo, int64_t *hi) {
    double l, h;
    int_range(t, &l, &h);
    kn_fixed_clamp(n, (int64_t)l, (int64_t)h, lo, hi);
}

static double const_at(const kn_kbuf *b, int64_t i) {
    return kn_load_f64(b->data->data, b->dtype, (size_t)(b->numel == 1 ? 0 : i));
}

bool kl_qmul_tables(kn_lower *L, const kn_kbuf *xs, const kn_kbuf *ws, const kn_kbuf *ys,
                    int64_t ncols, kn_kbuf **mult, kn_kbuf **shift) {
    const kn_kbuf *sc[3] = {xs, ws, ys};
    *mult = *shift = NULL;
    for (int i = 0; i < 3; i++)
        if (!sc[i] || sc[i]->kind != KB_CONST || !sc[i]->data || !sc[i]->numel) return false;
    int32_t *t = malloc((size_t)(ncols ? ncols : 1) * 2 * sizeof *t);
    KN_ASSERT(t);
    for (int64_t c = 0; c < ncols; c++) {
        kn_qmul q = kn_qmul_scales(const_at(xs, 0), const_at(ws, c), const_at(ys, 0));
        t[c] = q.mult;
        t[ncols + c] = q.shift;
    }
    *mult = kl_table(L, KN_I32, ncols, t);
    *shift = kl_table(L, KN_I32, ncols, t + ncols);
    free(t);
    return true;
}

static kn_kx *as_i64(kn_lower *L, kn_kbuf *b, kn_kx *index) {
    return kx_cast(L, KN_I64, kx_load(L, b, index));
}

static kn_kx *as_f64(kn_lower *L, kn_kbuf *b, kn_kx *index) {
    return kx_cast(L, KN_F64, kx_load(L, b, index));
}

/* Opens loops over b's shape; returns the flat index. */
static kn_kx *open_loops(kn_lower *L, const kn_kbuf *b, int *vars) {
    int64_t st[KN_MAX_RANK];
    kl_for_shape(L, b->rank, b->dims, vars);
    kn_strides(b->rank, b->dims, st);
    return kx_offset(L, b->rank, vars, st);
}

/* ---- QuantizeLinear, DequantizeLinear ---- */

/* The index into scale in[1] (and zero point in[2]) for the element of in[0] at
 * vars: 0 per tensor, vars[axis] per axis; blocked (opset 21 block_size b, checked by
 * infer: the scale has x's shape but ceil(D / b) along axis) the offset in the scale of
 * vars with vars[axis] / b. */
static kn_status qparam_index(kn_lower *L, const kn_node *n, kn_kbuf *const *in, const int *vars,
                              kn_kx **index) {
    kn_ctx *cx = kl_ctx(L);
    int64_t a = kn_attr_int(cx, n, "axis", 1), block = kn_attr_int(cx, n, "block_size", 0);
    if (kn_failed(cx)) return cx->status;
    *index = kx_int(L, 0);
    if (!block && in[1]->rank <= 1 && in[1]->numel == 1) return KN_OK;
    int axis;
    kn_status st = kn_axis(cx, n, a, in[0]->rank, 0, &axis);
    if (st) return st;
    if (!block) {
        *index = kx_var(L, vars[axis]);
        return KN_OK;
    }
    int64_t ss[KN_MAX_RANK];
    kn_strides(in[1]->rank, in[1]->dims, ss);
    for (int d = 0; d < in[0]->rank; d++) {
        kn_kx *c = kx_var(L, vars[d]);
        if (d == axis) c = kx_bin(L, KX_DIV, c, kx_int(L, block));
        *index = kx_add(L, *index, kx_bin(L, KX_MUL, c, kx_int(L, ss[d])));
    }
    return KN_OK;
}

/* QuantizeLinear on microcontrollers whose FPU converts with rounding to nearest even
 * (kn_target.cvt_rne): f32 x, a per-tensor scale and zero point, 8-bit y. One element:
 *
 *   n = cvtrn(x / s)                 VCVTR: rounded half to even, saturated, NaN 0
 *   q = sat8(qadd(n, zp))            QADD, SSAT/USAT #8
 *   y = isnan(x / s) ? 0 : q         (the host's NaN; with zp 0, cvtrn's 0 is it already)
 *
 * qadd, the saturating add, keeps n + zp inside int32 (n may be INT32_MAX) and changes no
 * result: saturating to int32 and then to 8 bits is saturating to 8 bits. The scalar FPU
 * (the M4) takes 16 elements a trip from one register block (QUANT_BLOCK, where the
 * target has them), then 4, their bytes one word each (USAT for both types, the int8
 * ones offset by 128 and flipped back by one XOR of the word); with 4 f32 lanes (Helium) and a
 * constant scale, 4 elements are one vector expression, the division a multiply and two exact
 * corrections (kn_vmath_div_const, the argument in passes/vmath.c) of x clamped to +-2^22 s (the
 * clamp keeps infinities and overflow out; beyond it the result saturates either way):
 * the C emitter prints it as KN_Q4F (VMUL, 4 VFMA/VFMS, VCVTN, VADD, VMAX, VMIN, VPSEL,
 * a narrowing VSTRB). The rest (numel % 4) in the scalar form. False (nothing built)
 * where the general lowering must do it. */
/* The word of quantize_mcu's 4 quotients xs (f32 locals) as bytes (y's type: u8, else i8),
 * the first lowest: each usat8(qadd(cvtrn(x), zp)), int8 ones offset by 128 and the word
 * flipped back by one XOR; with `nan`, a NaN quotient's byte 0 (zv: the zero point, or
 * NULL for 0, where cvtrn's 0 already gives it). */
static kn_kx *quant_word(kn_lower *L, kn_kx *const *xs, kn_kx *zv, bool u, bool nan) {
    kn_kx *word = NULL;
    kn_kx *off = u ? zv : kx_add(L, zv ? zv : kx_const(L, KN_I32, 0), kx_const(L, KN_I32, 128));
    for (int k = 3; k >= 0; k--) { /* the last byte first: (word << 8) | q, one ORR each */
        kn_kx *q = kx_cvtrn(L, xs[k]);
        if (off) q = kx_qadd(L, q, off);
        q = kx_sat(L, q, 8, true);
        if (nan) q = kx_select(L, kx_un(L, KX_ISNAN, xs[k]), kx_const(L, KN_I32, u ? 0 : 128), q);
        q = kx_cast(L, KN_U32, q);
        word = word ? kx_bin(L, KX_OR, kx_bin(L, KX_SHL, word, kx_const(L, KN_U32, 8)), q) : q;
    }
    if (!u) word = kx_bin(L, KX_XOR, word, kx_const(L, KN_U32, 0x80808080u));
    return kx_cast(L, KN_I32, word);
}

/* The elements of one plane of x (its last two dims; 0 below rank 3). */
static int64_t quant_plane(const kn_kbuf *x) {
    return x->rank >= 3 ? x->dims[x->rank - 2] * x->dims[x->rank - 1] : 0;
}

/* Opens the loops over `trips` steps of `per` elements of x from element base: one loop,
 * or, where the steps cover x from its start and x's last two dims hold a multiple of
 * `per` elements, one over the planes before them and one over a plane's steps, so that
 * each access stays inside its plane (the band views, passes/views.c, place a band of an
 * NCHW tensor's rows plane by plane: MobileNetV2's input bands quantized in place of a
 * copy). The first element of the step in *at; returns the loops opened. */
static int quant_steps(kn_lower *L, const kn_kbuf *x, int64_t trips, int64_t per, int64_t base,
                       kn_kx **at) {
    int64_t plane = quant_plane(x);
    if (!base && plane >= per && plane % per == 0 && trips == x->numel / per && x->numel > plane) {
        int vo = kl_for(L, x->numel / plane), vi = kl_for(L, plane / per);
        *at = kx_add(L, kx_mul(L, kx_var(L, vo), kx_int(L, plane)),
                     kx_mul(L, kx_var(L, vi), kx_int(L, per)));
        return 2;
    }
    *at = kx_mul(L, kx_var(L, kl_for(L, trips)), kx_int(L, per));
    if (base) *at = kx_add(L, *at, kx_int(L, base));
    return 1;
}

/* quantize_mcu's trips on a scalar FPU with register blocks (kn_target.fp_block >= 16): 16
 * elements loaded by one VLDM into s16-s31 (GCC saves them once a call), 4 words stored,
 * one NaN test (the sum of the 16 quotients) for the 16. MobileNetV1 0.25 int8's input on
 * the M4 (27,648 elements, fw_profile.sh): 269.6 K instructions in trips of 4 (4 VLDR,
 * the loop's 5 and the NaN test's 6 a trip), 228.1 K in blocks of 8 (s8-s15), 217.8 K in
 * blocks of 16 (7.9 an element). */
enum { QUANT_BLOCK = 16, QUANT_BLOCK_REG = 16 };

static bool quantize_mcu(kn_lower *L, kn_kbuf *x, kn_kbuf *s, kn_kbuf *z, kn_kbuf *y) {
    const struct kn_target *tg = L->target;
    if (!tg || tg->kind != KN_TARGET_MCU || !tg->cvt_rne || x->dtype != KN_F32 ||
        s->dtype != KN_F32 || s->numel != 1 || (z && z->numel != 1) ||
        (y->dtype != KN_I8 && y->dtype != KN_U8) || (z && z->dtype != y->dtype))
        return false;
    bool zero = !z || (z->kind == KB_CONST && z->data && const_at(z, 0) == 0);
    bool sc = s->kind == KB_CONST && s->data;
    double sval = sc ? const_at(s, 0) : 0, lo, hi;
    int_range(y->dtype, &lo, &hi);
    bool u = y->dtype == KN_U8;
    kn_kx *sv = NULL, *zv = NULL;
    if (!zero) zv = kx_var(L, kl_decl(L, KN_I32, kx_cast(L, KN_I32, kx_load(L, z, kx_int(L, 0)))));
    int64_t nv = 0;
    if (kl_lanes(L, KN_F32) == 4 && sc && kn_vmath_div_const_ok(sval) && x->numel >= 4) {
        nv = x->numel / 4;
        kn_kx *at;
        int nl = quant_steps(L, x, nv, 4, 0, &at);
        double b = ldexp(sval, 22);
        kn_kx *kb = kx_const(L, KN_F32, b), *kmb = kx_const(L, KN_F32, -b);
        kn_kx *v = kx_vload(L, x, at, 4);
        /* NaN lanes 0, found by integer arithmetic alone: v * v + 1 is NaN exactly where v
         * is and otherwise at least 1 (+inf for |v| >= 2^64), so its cvtrn is 0 exactly in
         * the NaN lanes. No float compare decides it: LLVM 19 lowers MVE's fcmp olt to
         * VPT.F32 LT and fcmp ord/uno to a GE-then-LT VPT pair, which QEMU's mps3-an547
         * (LT as "not GE") runs true, resp. never true, for a NaN lane, so a NaN once
         * reached the clamp's bound or kept the zero point. The clamp may now do anything
         * with a NaN; the last select replaces its lane. KN_Q4F tests v with VCMP NE. */
        kn_kx *nan = kx_bin(L, KX_EQ, kx_cvtrn(L, kx_fma_exact(L, v, v, kx_const(L, KN_F32, 1.0))),
                            kx_const(L, KN_I32, 0));
        kn_kx *t = kx_select(L, kx_bin(L, KX_LT, kb, v), kb, v);
        kn_kx *c = kx_select(L, kx_bin(L, KX_LT, t, kmb), kmb, t);
        kn_kx *q2 = kn_vmath_div_const(L, c, sval), *q = kx_cvtrn(L, q2);
        if (zv) q = kx_add(L, q, zv);
        q = kx_bin(L, KX_MIN, kx_bin(L, KX_MAX, q, kx_const(L, KN_I32, lo)),
                   kx_const(L, KN_I32, hi));
        q = kx_select(L, nan, kx_const(L, KN_I32, 0), q);
        kl_store(L, y, at, kx_cast(L, y->dtype, q));
        kl_end_n(L, nl);
    }
    int64_t left = x->numel - nv * 4, k0 = nv * 4;
    /* QUANT_BLOCK elements a trip from one register block (kn_target.fp_block: one VLDM),
     * then 4, then the rest one at a time; steps of 4 where only they keep to the planes
     * (quant_steps) */
    int64_t plane = quant_plane(x);
    bool planes4 = plane % 4 == 0 && plane % QUANT_BLOCK && x->numel > plane; /* keep planes */
    int64_t widths[3] = {nv || planes4 || tg->fp_block < QUANT_BLOCK ? 0 : QUANT_BLOCK, nv ? 0 : 4,
                         1};
    for (int part = 0; part < 3; part++) {
        int64_t unroll = widths[part], trips = unroll ? left / unroll : 0, base = k0;
        if (!trips) continue;
        left -= trips * unroll;
        k0 += trips * unroll;
        if (!sv) sv = kx_var(L, kl_decl(L, KN_F32, kx_load(L, s, kx_int(L, 0))));
        if (unroll == QUANT_BLOCK) { /* a block, 4 words; one NaN test for the block */
            kn_kx *xs[QUANT_BLOCK], *at0;
            int nl = quant_steps(L, x, trips, unroll, base, &at0);
            int blk =
                kl_decl_block(L, QUANT_BLOCK, kx_vload(L, x, at0, QUANT_BLOCK), QUANT_BLOCK_REG);
            for (int k = 0; k < unroll; k++)
                xs[k] = kx_var(L, kl_decl(L, KN_F32, kx_bin(L, KX_DIV, kx_lane(L, blk, k), sv)));
            if (zv) {
                kn_kx *sum[QUANT_BLOCK]; /* a tree of sums: NaN where one of them is */
                for (int k = 0; k < unroll; k++) sum[k] = xs[k];
                for (int w = (int)unroll; w > 1; w /= 2)
                    for (int k = 0; k < w / 2; k++) sum[k] = kx_add(L, sum[2 * k], sum[2 * k + 1]);
                kl_if(L, kx_un(L, KX_ISNAN, sum[0]));
                for (int w = 0; w < unroll / 4; w++)
                    kl_store_word(L, y, kx_add(L, at0, kx_int(L, 4 * w)),
                                  quant_word(L, xs + 4 * w, zv, u, true));
                kl_else(L);
            }
            for (int w = 0; w < unroll / 4; w++)
                kl_store_word(L, y, kx_add(L, at0, kx_int(L, 4 * w)),
                              quant_word(L, xs + 4 * w, zv, u, false));
            if (zv) kl_end(L);
            kl_end_n(L, nl);
            continue;
        }
        if (unroll == 4) { /* 4 elements, one word */
            kn_kx *xs[4], *at0;
            int nl = quant_steps(L, x, trips, 4, base, &at0);
            for (int k = 0; k < 4; k++)
                xs[k] = kx_var(
                    L, kl_decl(L, KN_F32,
                               kx_bin(L, KX_DIV, kx_load(L, x, kx_add(L, at0, kx_int(L, k))), sv)));
            if (zv) { /* the NaN tests only where the sum of the 4 is NaN (a NaN among them,
                         or +inf and -inf): one test for 4 elements */
                kn_kx *sum = kx_add(L, kx_add(L, xs[0], xs[1]), kx_add(L, xs[2], xs[3]));
                kl_if(L, kx_un(L, KX_ISNAN, sum));
                kl_store_word(L, y, at0, quant_word(L, xs, zv, u, true));
                kl_else(L);
            }
            kl_store_word(L, y, at0, quant_word(L, xs, zv, u, false));
            if (zv) kl_end(L);
            kl_end_n(L, nl);
            continue;
        }
        kn_kx *at = kx_add(L, kx_var(L, kl_for(L, trips)), kx_int(L, base));
        kn_kx *xq = kx_var(L, kl_decl(L, KN_F32, kx_bin(L, KX_DIV, kx_load(L, x, at), sv)));
        kn_kx *q = kx_cvtrn(L, xq);
        if (zv) q = kx_qadd(L, q, zv);
        q = kx_sat(L, q, 8, u);
        if (zv) q = kx_select(L, kx_un(L, KX_ISNAN, xq), kx_const(L, KN_I32, 0), q);
        kl_store(L, y, at, kx_cast(L, y->dtype, q));
        kl_end(L);
    }
    return true;
}

static kn_status lower_quantize(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                kn_kbuf *const *out) {
    kn_kbuf *x = in[0], *s = in[1], *z = n->nin > 2 ? in[2] : NULL, *y = out[0];
    if (!kn_attr_int(kl_ctx(L), n, "block_size", 0) && quantize_mcu(L, x, s, z, y)) return KN_OK;
    int in_float = x->dtype != KN_F64 && x->dtype != KN_I32 && s->dtype != KN_F64;
    kn_dtype qt = in_float ? KN_F32 : KN_F64;
    int v[KN_MAX_RANK];
    /* one scale and zero point: read once, before the loops (the C compiler cannot hoist
     * the zero point's load past the stores of the same byte type) */
    kn_kx *sv = NULL, *zv = NULL;
    if (s->numel == 1 && !kn_dtype_is_f8(y->dtype)) {
        sv = kx_var(L, kl_decl(L, qt, kx_cast(L, qt, kx_load(L, s, kx_int(L, 0)))));
        if (z) zv = kx_var(L, kl_decl(L, KN_I32, kx_cast(L, KN_I32, kx_load(L, z, kx_int(L, 0)))));
    }
    kn_kx *oi = open_loops(L, x, v), *pi;
    kn_status st = qparam_index(L, n, in, v, &pi);
    if (st) return st;
    kn_kx *q = kx_bin(L, KX_DIV, kx_cast(L, qt, kx_load(L, x, oi)),
                      sv ? sv : kx_cast(L, qt, kx_load(L, s, pi)));
    if (kn_dtype_is_f8(y->dtype)) { /* x / scale + zp (0 by the spec), rounded by the cast */
        bool saturate = kn_attr_int(kl_ctx(L), n, "saturate", 1) != 0;
        if (z)
            q = kx_bin(L, KX_ADD, kx_cast(L, KN_F64, q),
                       kx_cast(L, KN_F64, kl_f8_decode(L, kx_load(L, z, pi), z->dtype)));
        kl_store(L, y, oi, kl_f8_encode(L, q, y->dtype, saturate));
        kl_end_n(L, x->rank);
        return KN_OK;
    }
    kl_store(L, y, oi, kl_requant(L, q, zv ? zv : z ? kx_load(L, z, pi) : NULL, y->dtype));
    kl_end_n(L, x->rank);
    return KN_OK;
}

static kn_status lower_dequantize(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                  kn_kbuf *const *out) {
    kn_kbuf *x = in[0], *s = in[1], *z = n->nin > 2 ? in[2] : NULL;
    int v[KN_MAX_RANK], nl = x->rank;
    kn_kx *oi, *pi;
    kn_ctx *cx = kl_ctx(L);
    bool flat = !kn_attr_int(cx, n, "block_size", 0) && s->numel == 1 && (!z || z->numel == 1);
    /* 8-bit x and a float32 scale: (x - z) has 9 bits, so its product with the scale is
     * exact in double and float32 gives the same once-rounded result, twice as wide */
    kn_dtype ft = kn_dtype_get(x->dtype)->size == 1 && s->dtype == KN_F32 && out[0]->dtype == KN_F32
                      ? KN_F32
                      : KN_F64;
    const struct kn_target *tg = L->target;
    int64_t nv = flat && ft == KN_F32 && !kn_dtype_is_f8(x->dtype) && tg &&
                         tg->kind == KN_TARGET_MCU && kl_lanes(L, KN_F32) == 4
                     ? x->numel / 4
                     : 0;
    if (nv) { /* microcontrollers with vectors: 4 elements a step (Helium's C: KN_DQ4F,
                 VLDRB.U32, VSUB, VCVT, VMUL, VSTRW), then the rest one at a time */
        int vi = kl_for(L, nv);
        kn_kx *vo = kx_mul(L, kx_var(L, vi), kx_int(L, 4));
        kn_kx *vd = kx_cast(L, KN_I32, kx_vload(L, x, vo, 4));
        if (z) vd = kx_bin(L, KX_SUB, vd, kx_cast(L, KN_I32, kx_load(L, z, kx_int(L, 0))));
        kl_store(L, out[0], vo,
                 kx_bin(L, KX_MUL, kx_cast(L, KN_F32, vd), kx_load(L, s, kx_int(L, 0))));
        kl_end(L);
        if (x->numel % 4 == 0) return KN_OK;
    }
    if (flat) { /* per tensor: one loop over the elements (rows of the innermost axis may
                   be short: DS-CNN's 5) */
        oi = kx_var(L, kl_for(L, x->numel - nv * 4));
        if (nv) oi = kx_add(L, oi, kx_int(L, nv * 4));
        pi = kx_int(L, 0), nl = 1;
    } else {
        oi = open_loops(L, x, v);
        kn_status st = qparam_index(L, n, in, v, &pi);
        if (st) return st;
    }
    if (kn_dtype_is_f8(x->dtype)) { /* (value - zero point value) * scale, exact in f64 */
        kn_kx *d = kx_cast(L, KN_F64, kl_f8_decode(L, kx_load(L, x, oi), x->dtype));
        if (z)
            d = kx_bin(L, KX_SUB, d,
                       kx_cast(L, KN_F64, kl_f8_decode(L, kx_load(L, z, pi), z->dtype)));
        kl_store(L, out[0], oi, kx_bin(L, KX_MUL, d, kx_cast(L, KN_F64, kx_load(L, s, pi))));
        kl_end_n(L, nl);
        return KN_OK;
    }
    kn_kx *d = as_i64(L, x, oi);
    if (z) d = kx_bin(L, KX_SUB, d, as_i64(L, z, pi));
    kl_store(L, out[0], oi,
             kx_bin(L, KX_MUL, kx_cast(L, ft, kx_cast(L, KN_I32, d)),
                    kx_cast(L, ft, kx_load(L, s, pi))));
    kl_end_n(L, nl);
    return KN_OK;
}

/* ---- DynamicQuantizeLinear ---- */

/* scale = (max(0, max x) - min(0, min x)) / 255, zp = saturate(round(-min / scale)),
 * y = saturate(round(x / scale) + zp), all in float32; scale 0 gives zp 0, y 0.
 * NaN elements are ignored by the min/max pass, as in the interpreter. */
static kn_status lower_dynquant(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                kn_kbuf *const *out) {
    (void)n;
    kn_kbuf *x = in[0];
    int mn = kl_decl(L, KN_F32, kx_const(L, KN_F32, 0));
    int mx = kl_decl(L, KN_F32, kx_const(L, KN_F32, 0));
    int i = kl_for(L, x->numel);
    int v = kl_decl(L, KN_F32, kx_load(L, x, kx_var(L, i)));
    kl_set(
        L, mn,
        kx_select(L, kx_bin(L, KX_LT, kx_var(L, v), kx_var(L, mn)), kx_var(L, v), kx_var(L, mn)));
    kl_set(
        L, mx,
        kx_select(L, kx_bin(L, KX_GT, kx_var(L, v), kx_var(L, mx)), kx_var(L, v), kx_var(L, mx)));
    kl_end(L);
    int scale = kl_decl(L, KN_F32,
                        kx_bin(L, KX_DIV, kx_bin(L, KX_SUB, kx_var(L, mx), kx_var(L, mn)),
                               kx_const(L, KN_F32, 255)));
    kn_kx *nz = kx_bin(L, KX_NE, kx_var(L, scale), kx_const(L, KN_F32, 0));
    kn_kx *zq =
        kl_requant(L,
                   kx_bin(L, KX_DIV, kx_bin(L, KX_SUB, kx_const(L, KN_F32, 0), kx_var(L, mn)),
                          kx_var(L, scale)),
                   NULL, KN_U8);
    int zp = kl_decl(L, KN_U8, kx_select(L, nz, zq, kx_const(L, KN_U8, 0)));
    if (out[1]) kl_store(L, out[1], kx_int(L, 0), kx_var(L, scale));
    if (out[2]) kl_store(L, out[2], kx_int(L, 0), kx_var(L, zp));
    i = kl_for(L, x->numel);
    kn_kx *yq = kl_requant(L, kx_bin(L, KX_DIV, kx_load(L, x, kx_var(L, i)), kx_var(L, scale)),
                           kx_var(L, zp), KN_U8);
    kl_store(L, out[0], kx_var(L, i), kx_select(L, nz, yq, kx_const(L, KN_U8, 0)));
    kl_end(L);
    return KN_OK;
}

/* ---- operand parameters ---- */

/* The offset into parameter p (a zero point or scale) for the element of operand x at
 * index vars (stride per dim xstr unused): p has one element, or is 1-D and indexed
 * by x's dim `dim`, or broadcasts to x's shape. Dim `skip` counts as index 0 (its
 * loop is not open). Reports a parameter that fits none of these. */
static kn_status param_off(kn_lower *L, const kn_node *n, const kn_kbuf *p, int pi,
                           const kn_kbuf *x, int dim, const int *vars, int skip, kn_kx **off) {
    *off = kx_int(L, 0);
    if (p->numel == 1 || x->numel == 0) return KN_OK;
    if (p->rank == 1 && dim >= 0 && dim < x->rank && p->numel == x->dims[dim]) {
        if (dim != skip) *off = kx_var(L, vars[dim]);
        return KN_OK;
    }
    int ok = p->rank <= x->rank;
    for (int d = 0; ok && d < p->rank; d++) {
        int64_t e = p->dims[d], f = x->dims[x->rank - p->rank + d];
        ok = e == 1 || e == f;
    }
    if (!ok)
        return kn_diag(kl_ctx(L), n, KN_EINVAL, "input %d does not fit its operand's shape", pi);
    kn_type pt = kn_type_make(p->dtype, p->rank, p->dims);
    int64_t st[KN_MAX_RANK];
    kn_bcast_strides(&pt, x->rank, x->dims, st);
    if (skip >= 0) st[skip] = 0;
    *off = kx_offset(L, x->rank, vars, st);
    return KN_OK;
}

/* ---- MatMul (numpy matmul semantics) ---- */

typedef struct mm_nest {
    kn_kbuf *a, *b;
    int av[KN_MAX_RANK], bv[KN_MAX_RANK];     /* loop variable of each operand dim */
    int64_t as[KN_MAX_RANK], bs[KN_MAX_RANK]; /* element strides, 0 on broadcast dims */
    int ak, bk;                               /* the K dim of each operand */
    int64_t K;
} mm_nest;

/* Maps operand x's dims onto output loop vars yv: batch dims right-aligned with the
 * output's nb batch dims (broadcast dims get stride 0), the row/column dim `own` to
 * yv[yown] (when x has one), and the K dim at kdim (var filled in later). */
static void mm_operand(const kn_kbuf *x, const int *yv, int nb, int nmat, int own, int yown,
                       int *vars, int64_t *st) {
    kn_strides(x->rank, x->dims, st);
    for (int d = 0; d < x->rank - nmat; d++) {
        vars[d] = yv[nb - (x->rank - nmat) + d];
        if (x->dims[d] == 1) st[d] = 0;
    }
    if (own >= 0) vars[own] = yv[yown];
}

/* Opens loops over y's shape (their variables into yv); returns y's flat index. */
static kn_kx *mm_open(kn_lower *L, kn_kbuf *a, kn_kbuf *b, kn_kbuf *y, mm_nest *g, int *yv) {
    kn_kx *oi = open_loops(L, y, yv);
    int ma = a->rank >= 2, mb = b->rank >= 2;
    int nb = y->rank - ma - mb;
    g->a = a;
    g->b = b;
    g->ak = a->rank - 1;
    g->bk = mb ? b->rank - 2 : 0;
    g->K = a->dims[g->ak];
    mm_operand(a, yv, nb, ma ? 2 : 1, ma ? a->rank - 2 : -1, nb, g->av, g->as);
    mm_operand(b, yv, nb, mb ? 2 : 1, mb ? b->rank - 1 : -1, nb + ma, g->bv, g->bs);
    return oi;
}

/* Declares acc = sum_k (a - a_zp)(b - b_zp) in int64; zero points az, bz (inputs
 * azi, bzi) may be NULL. Returns acc's variable. */
static kn_status mm_dot(kn_lower *L, const kn_node *n, mm_nest *g, kn_kbuf *az, int azi,
                        kn_kbuf *bz, int bzi, int *acc) {
    *acc = kl_decl(L, KN_I64, kx_int(L, 0));
    int k = kl_for(L, g->K);
    g->av[g->ak] = g->bv[g->bk] = k;
    kn_kx *x = as_i64(L, g->a, kx_offset(L, g->a->rank, g->av, g->as));
    kn_kx *w = as_i64(L, g->b, kx_offset(L, g->b->rank, g->bv, g->bs)), *off;
    kn_status st;
    if (az) {
        if ((st = param_off(L, n, az, azi, g->a, g->a->rank - 2, g->av, -1, &off))) return st;
        x = kx_bin(L, KX_SUB, x, as_i64(L, az, off));
    }
    if (bz) {
        if ((st = param_off(L, n, bz, bzi, g->b, g->b->rank - 1, g->bv, -1, &off))) return st;
        w = kx_bin(L, KX_SUB, w, as_i64(L, bz, off));
    }
    kl_set(L, *acc, kx_fma(L, x, w, kx_var(L, *acc)));
    kl_end(L);
    return KN_OK;
}

/* Describes an integer matrix product of A (rank >= 2) and one 2-D B for the tile pass
 * when its parameters are per tensor, except B's zero point and scale (per column). */
static void mm_describe(kn_lower *L, kn_kbuf *a, kn_kbuf *b, kn_kbuf *y, const kn_contract *q) {
    int64_t N = b->rank == 2 ? b->dims[1] : 0;
    if (a->rank < 2 || b->rank != 2 || a->dims[a->rank - 1] == 0) return;
    const kn_kbuf *one[] = {q->xz, q->xscale, q->yscale, q->yz}, *col[] = {q->wz, q->wscale};
    for (int i = 0; i < 4; i++)
        if (one[i] && one[i]->numel != 1) return;
    for (int i = 0; i < 2; i++)
        if (col[i] && col[i]->numel != 1 && (col[i]->rank != 1 || col[i]->numel != N)) return;
    kn_contract d = *q;
    d.kind = KN_CONTRACT_MATMUL;
    d.x = a, d.w = b, d.y = y;
    d.K = a->dims[a->rank - 1], d.M = a->numel / d.K, d.N = N, d.alpha = 1;
    kl_contract(L, &d);
}

/* The value an integer contraction stores for its int64 accumulator acc: acc as the
 * op's int32, or with a fused float tail (passes/dynq.c, n's kn.epilogue e) float32(int32
 * acc) and then e's steps in float32, in order, operands broadcast to y at coord. The
 * descriptor q takes e and its operand buffers for the tile pass. */
static kn_kx *int_result(kn_lower *L, const kn_epilogue *e, kn_kbuf *const *in, kn_kbuf *y,
                         kn_kx *const *coord, kn_kx *acc, kn_contract *q) {
    if (!e->n) return acc;
    kn_kx *opnd[KN_EPI_MAX] = {0};
    for (int k = 0; k < e->n; k++)
        if (e->s[k].operand >= 0) {
            q->operand[k] = in[e->s[k].operand];
            opnd[k] = kl_bcast_load(L, in[e->s[k].operand], y, coord);
        }
    q->epi = e;
    return kl_epilogue(L, e, kx_cast(L, KN_F32, kx_cast(L, KN_I32, acc)), opnd);
}

static kn_status lower_matmulint(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                 kn_kbuf *const *out) {
    kn_epilogue e;
    if (kn_epilogue_of(kl_ctx(L), n, &e)) return kl_ctx(L)->status;
    int nin = kn_node_op_inputs(n); /* a fused tail's operands follow */
    kn_kbuf *az = nin > 2 ? in[2] : NULL, *bz = nin > 3 ? in[3] : NULL;
    if (in[1]->rank == 1 && bz && bz->numel != 1)
        return kn_diag(kl_ctx(L), n, KN_EINVAL, "b_zero_point must be a scalar for 1-D B");
    mm_nest g;
    int yv[KN_MAX_RANK];
    kn_kx *oi = mm_open(L, in[0], in[1], out[0], &g, yv);
    int acc;
    kn_status st = mm_dot(L, n, &g, az, 2, bz, 3, &acc);
    if (st) return st;
    kn_kx *coord[KN_MAX_RANK];
    for (int d = 0; d < out[0]->rank; d++) coord[d] = kx_var(L, yv[d]);
    kn_contract q = {.xz = az, .wz = bz};
    kl_store(L, out[0], oi, int_result(L, &e, in, out[0], coord, kx_var(L, acc), &q));
    kl_end_n(L, out[0]->rank);
    mm_describe(L, in[0], in[1], out[0], &q);
    return KN_OK;
}

static kn_status lower_qlinearmatmul(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                     kn_kbuf *const *out) {
    mm_nest g;
    int yv[KN_MAX_RANK];
    kn_kx *oi = mm_open(L, in[0], in[3], out[0], &g, yv);
    int acc;
    kn_status st = mm_dot(L, n, &g, in[2], 2, in[5], 5, &acc);
    if (st) return st;
    /* the scales of row m of A and column n of B; with K = 0 acc is 0 and y = y_zp */
    kn_kx *as = kx_const(L, KN_F64, 1), *bs = kx_const(L, KN_F64, 1), *off = NULL;
    if (g.K) {
        if ((st = param_off(L, n, in[1], 1, in[0], in[0]->rank - 2, g.av, g.ak, &off))) return st;
        as = as_f64(L, in[1], off);
        if ((st = param_off(L, n, in[4], 4, in[3], in[3]->rank - 1, g.bv, g.bk, &off))) return st;
        bs = as_f64(L, in[4], off);
    }
    kn_kbuf *bias = n->nin > 8 ? in[8] : NULL; /* kiln's per-column int32 bias (2-D B) */
    kn_kx *a = kx_var(L, acc);
    if (bias) a = kx_bin(L, KX_ADD, a, as_i64(L, bias, kx_var(L, g.bv[in[3]->rank - 1])));
    bool fixed = kn_fixed_point(n);
    int64_t clo = 0, chi = 0;
    if (fixed) { /* per-tensor A scale (the qdq pass makes no other), per-element B scale */
        kn_kbuf *mt, *sh;
        if (in[1]->numel != 1 || !kl_qmul_tables(L, in[1], in[4], in[6], in[4]->numel, &mt, &sh))
            return kn_diag(kl_ctx(L), n, KN_EINVAL,
                           "fixed-point requantization needs constant scales, a_scale per tensor");
        kn_kx *bi = g.K ? off : kx_int(L, 0);
        fixed_range(n, out[0]->dtype, &clo, &chi);
        kl_store(L, out[0], oi,
                 kl_requant_fixed_range(L, a, kx_load(L, mt, bi), kx_load(L, sh, bi),
                                        kx_load(L, in[7], kx_int(L, 0)), out[0]->dtype, clo, chi));
    } else {
        kn_kx *m = kx_bin(L, KX_DIV, kx_bin(L, KX_MUL, as, bs), as_f64(L, in[6], kx_int(L, 0)));
        kn_kx *v = kx_bin(L, KX_MUL, kx_cast(L, KN_F64, a), m);
        kl_store(L, out[0], oi, kl_requant(L, v, kx_load(L, in[7], kx_int(L, 0)), out[0]->dtype));
    }
    kl_end_n(L, out[0]->rank);
    mm_describe(L, in[0], in[3], out[0],
                &(kn_contract){.fixed = fixed,
                               .clamp = fixed,
                               .clo = clo,
                               .chi = chi,
                               .xz = in[2],
                               .wz = in[5],
                               .bias = bias,
                               .xscale = in[1],
                               .wscale = in[4],
                               .yscale = in[6],
                               .yz = in[7]});
    return KN_OK;
}

/* ---- Convolution ---- */

/* The interpreter's geometry plus what the loop nest adds. */
typedef struct conv_nest {
    kn_conv_geom geo;
    int64_t cg, mg; /* channels in and out per group */
    kn_kx *m;       /* the output channel, once the loops are open */
    bool xcl, ycl;  /* x, y channels-last (kn.layout: QLinearConv, passes/layout.c) */
} conv_nest;

/* The geometry of n for x [N, C, D...] and w [M, C/group, k...] (shapes checked by
 * inference), as kn_conv_geom_make resolves it. */
static kn_status conv_make(kn_lower *L, const kn_node *n, const kn_kbuf *x, const kn_kbuf *w,
                           conv_nest *g) {
    kn_type xt = kn_type_make(x->dtype, x->rank, x->dims);
    kn_type wt = kn_type_make(w->dtype, w->rank, w->dims);
    kn_conv_layout(n, &g->xcl, &g->ycl);
    if (g->xcl) xt = kn_type_channels(&xt, false);
    int known;
    if (kn_conv_geom_make(kl_ctx(L), n, &xt, &wt, &g->geo, &known)) return kl_ctx(L)->status;
    g->cg = g->geo.C / g->geo.group;
    g->mg = g->geo.M / g->geo.group;
    return KN_OK;
}

/* Opens loops over y [N, M, O...] (M split into group x per-group channel); returns
 * y's flat index and sets vars (batch, group, channel in group, output position). */
static kn_kx *conv_open(kn_lower *L, const kn_kbuf *y, conv_nest *g, int *vb, int *vg, int *vo) {
    int64_t ospat = kn_prod(g->geo.out, 0, g->geo.s);
    *vb = kl_for(L, y->dims[0]);
    *vg = g->geo.group > 1 ? kl_for(L, g->geo.group) : -1;
    int vm = kl_for(L, g->mg);
    for (int d = 0; d < g->geo.s; d++) vo[d] = kl_for(L, g->geo.out[d]);
    kn_kx *m = kx_var(L, vm);
    if (*vg >= 0) m = kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_var(L, *vg), kx_int(L, g->mg)), m);
    g->m = m;
    int64_t ost[KN_MAX_RANK];
    kn_strides(g->geo.s, g->geo.out, ost);
    if (g->ycl) /* ((b * ospat + o) * M + m */
        return kx_bin(L, KX_ADD,
                      kx_bin(L, KX_MUL,
                             kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_var(L, *vb), kx_int(L, ospat)),
                                    kx_offset(L, g->geo.s, vo, ost)),
                             kx_int(L, g->geo.M)),
                      m);
    kn_kx *oi = kx_bin(L, KX_MUL,
                       kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_var(L, *vb), kx_int(L, g->geo.M)), m),
                       kx_int(L, ospat));
    return kx_bin(L, KX_ADD, oi, kx_offset(L, g->geo.s, vo, ost));
}

static void conv_close(kn_lower *L, const conv_nest *g, int vg) {
    kl_end_n(L, g->geo.s + 2 + (vg >= 0));
}

/* Declares acc = the int64 sum over the channels of m's group and the kernel taps
 * inside the input of (x - xz[0]) * (w - wz[m or 0]); xz, wz may be NULL. */
static int conv_dot(kn_lower *L, conv_nest *g, kn_kbuf *x, kn_kbuf *xz, kn_kbuf *w, kn_kbuf *wz,
                    int vb, int vg, const int *vo) {
    int s = g->geo.s;
    int64_t ispat = kn_prod(g->geo.in, 0, s), kspat = kn_prod(g->geo.k, 0, s);
    int64_t ist[KN_MAX_RANK], kst[KN_MAX_RANK];
    kn_strides(s, g->geo.in, ist);
    kn_strides(s, g->geo.k, kst);
    int acc = kl_decl(L, KN_I64, kx_int(L, 0));
    int c = kl_for(L, g->cg);
    /* channel base offsets in x and w */
    kn_kx *xc = kx_bin(L, KX_MUL, kx_var(L, vb), kx_int(L, g->geo.C));
    if (vg >= 0) xc = kx_bin(L, KX_ADD, xc, kx_bin(L, KX_MUL, kx_var(L, vg), kx_int(L, g->cg)));
    xc = kx_bin(L, KX_MUL, kx_bin(L, KX_ADD, xc, kx_var(L, c)), kx_int(L, ispat));
    kn_kx *wc = kx_bin(L, KX_MUL,
                       kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, g->m, kx_int(L, g->cg)), kx_var(L, c)),
                       kx_int(L, kspat));
    int vk[KN_MAX_RANK], vp[KN_MAX_RANK], open = 1;
    for (int d = 0; d < s; d++) {
        vk[d] = kl_for(L, g->geo.k[d]);
        open++;
        /* input position of this tap: o * stride - pad + k * dilation */
        kn_kx *pos =
            kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_var(L, vo[d]), kx_int(L, g->geo.str[d])),
                   kx_bin(L, KX_SUB, kx_bin(L, KX_MUL, kx_var(L, vk[d]), kx_int(L, g->geo.dil[d])),
                          kx_int(L, g->geo.pb[d])));
        vp[d] = kl_decl(L, KN_I64, pos);
        kn_kx *in = NULL;
        if (g->geo.pb[d] > 0) in = kx_bin(L, KX_GE, kx_var(L, vp[d]), kx_int(L, 0));
        if ((g->geo.out[d] - 1) * g->geo.str[d] - g->geo.pb[d] +
                (g->geo.k[d] - 1) * g->geo.dil[d] >=
            g->geo.in[d]) {
            kn_kx *hi = kx_bin(L, KX_LT, kx_var(L, vp[d]), kx_int(L, g->geo.in[d]));
            in = in ? kx_bin(L, KX_LAND, in, hi) : hi;
        }
        if (in) {
            kl_if(L, in);
            open++;
        }
    }
    kn_kx *xi = kx_bin(L, KX_ADD, xc, kx_offset(L, s, vp, ist));
    if (g->xcl) { /* (b * ispat + position) * C + channel */
        kn_kx *ch = kx_var(L, c);
        if (vg >= 0) ch = kx_bin(L, KX_ADD, ch, kx_bin(L, KX_MUL, kx_var(L, vg), kx_int(L, g->cg)));
        xi = kx_bin(L, KX_ADD,
                    kx_bin(L, KX_MUL,
                           kx_bin(L, KX_ADD, kx_bin(L, KX_MUL, kx_var(L, vb), kx_int(L, ispat)),
                                  kx_offset(L, s, vp, ist)),
                           kx_int(L, g->geo.C)),
                    ch);
    }
    kn_kx *xv = as_i64(L, x, xi);
    kn_kx *wv = as_i64(L, w, kx_bin(L, KX_ADD, wc, kx_offset(L, s, vk, kst)));
    if (xz) xv = kx_bin(L, KX_SUB, xv, as_i64(L, xz, kx_int(L, 0)));
    if (wz) wv = kx_bin(L, KX_SUB, wv, as_i64(L, wz, wz->numel == 1 ? kx_int(L, 0) : g->m));
    kl_set(L, acc, kx_fma(L, xv, wv, kx_var(L, acc)));
    kl_end_n(L, open);
    return acc;
}

/* Describes a 1-D or 2-D integer convolution for the tile pass: q holds its zero points
 * and scales (kn_contract's integer fields). */
static void conv_describe(kn_lower *L, const conv_nest *g, kn_kbuf *x, kn_kbuf *w, kn_kbuf *bias,
                          kn_kbuf *y, const kn_contract *q) {
    const kn_conv_geom *o = &g->geo;
    if (o->s < 1 || o->s > 2 || (q->xz && q->xz->numel != 1)) return;
    int two = o->s == 2;
    int64_t pe[2];
    for (int d = 0; d < o->s; d++) { /* end pads: what the last tap reads past the input */
        int64_t reach = (o->out[d] - 1) * o->str[d] + (o->k[d] - 1) * o->dil[d] + 1;
        pe[d] = reach - o->in[d] - o->pb[d] > 0 ? reach - o->in[d] - o->pb[d] : 0;
    }
    kn_contract d = *q;
    d.kind = KN_CONTRACT_CONV;
    d.x = x, d.w = w, d.bias = bias, d.y = y, d.nsp = o->s;
    d.n = o->N, d.c = o->C, d.m = o->M, d.group = o->group;
    d.h = two ? o->in[0] : 1, d.oh = two ? o->out[0] : 1, d.kh = two ? o->k[0] : 1;
    d.sh = two ? o->str[0] : 1, d.dh = two ? o->dil[0] : 1;
    d.ph = two ? o->pb[0] : 0, d.peh = two ? pe[0] : 0;
    d.w_ = o->in[two], d.ow = o->out[two], d.kw = o->k[two], d.sw = o->str[two];
    d.dw = o->dil[two], d.pw = o->pb[two], d.pew = pe[two];
    if (g->xcl) memcpy(d.xs, (int64_t[4]){d.h * d.w_ * d.c, 1, d.w_ * d.c, d.c}, sizeof d.xs);
    if (g->ycl) memcpy(d.ys, (int64_t[4]){d.oh * d.ow * d.m, 1, d.ow * d.m, d.m}, sizeof d.ys);
    kl_contract(L, &d);
}

static kn_status lower_convint(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                               kn_kbuf *const *out) {
    kn_epilogue e;
    if (kn_epilogue_of(kl_ctx(L), n, &e)) return kl_ctx(L)->status;
    conv_nest g;
    kn_status st = conv_make(L, n, in[0], in[1], &g);
    if (st) return st;
    int nin = kn_node_op_inputs(n); /* a fused tail's operands follow */
    kn_kbuf *xz = nin > 2 ? in[2] : NULL, *wz = nin > 3 ? in[3] : NULL;
    if (wz && wz->numel != 1 && wz->numel != g.geo.M)
        return kn_diag(kl_ctx(L), n, KN_EINVAL, "w_zero_point must have 1 or %lld elements",
                       (long long)g.geo.M);
    if (e.n && (g.xcl || g.ycl))
        return kn_diag(kl_ctx(L), n, KN_EINTERNAL, "a fused tail needs NCHW tensors");
    int vb, vg, vo[KN_MAX_RANK];
    kn_kx *oi = conv_open(L, out[0], &g, &vb, &vg, vo);
    int acc = conv_dot(L, &g, in[0], xz, in[1], wz, vb, vg, vo);
    kn_kx *coord[KN_MAX_RANK] = {kx_var(L, vb), g.m};
    for (int d = 0; d < g.geo.s; d++) coord[2 + d] = kx_var(L, vo[d]);
    kn_contract q = {.xz = xz, .wz = wz};
    kl_store(L, out[0], oi, int_result(L, &e, in, out[0], coord, kx_var(L, acc), &q));
    conv_close(L, &g, vg);
    conv_describe(L, &g, in[0], in[1], NULL, out[0], &q);
    return KN_OK;
}

static kn_status lower_qlinearconv(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                   kn_kbuf *const *out) {
    conv_nest g;
    kn_status st = conv_make(L, n, in[0], in[3], &g);
    if (st) return st;
    kn_kbuf *ws = in[4], *wz = in[5], *bias = n->nin > 8 ? in[8] : NULL;
    if ((ws->numel != 1 && ws->numel != g.geo.M) || (wz->numel != 1 && wz->numel != g.geo.M))
        return kn_diag(kl_ctx(L), n, KN_EINVAL,
                       "w_scale and w_zero_point must have 1 or %lld elements", (long long)g.geo.M);
    if (bias && bias->numel != g.geo.M)
        return kn_diag(kl_ctx(L), n, KN_EINVAL, "B must have %lld elements", (long long)g.geo.M);
    int vb, vg, vo[KN_MAX_RANK];
    kn_kx *oi = conv_open(L, out[0], &g, &vb, &vg, vo);
    int acc = conv_dot(L, &g, in[0], in[2], in[3], wz, vb, vg, vo);
    kn_kx *a = kx_var(L, acc);
    if (bias) a = kx_bin(L, KX_ADD, a, as_i64(L, bias, g.m));
    kn_kx *wi = ws->numel == 1 ? kx_int(L, 0) : g.m;
    bool fixed = kn_fixed_point(n);
    int64_t clo = 0, chi = 0;
    if (fixed) {
        kn_kbuf *mt, *sh;
        if (!kl_qmul_tables(L, in[1], ws, in[6], ws->numel, &mt, &sh))
            return kn_diag(kl_ctx(L), n, KN_EINVAL,
                           "fixed-point requantization needs constant scales");
        fixed_range(n, out[0]->dtype, &clo, &chi);
        kl_store(L, out[0], oi,
                 kl_requant_fixed_range(L, a, kx_load(L, mt, wi), kx_load(L, sh, wi),
                                        kx_load(L, in[7], kx_int(L, 0)), out[0]->dtype, clo, chi));
    } else {
        kn_kx *m =
            kx_bin(L, KX_DIV, kx_bin(L, KX_MUL, as_f64(L, in[1], kx_int(L, 0)), as_f64(L, ws, wi)),
                   as_f64(L, in[6], kx_int(L, 0)));
        kn_kx *v = kx_bin(L, KX_MUL, kx_cast(L, KN_F64, a), m);
        kl_store(L, out[0], oi, kl_requant(L, v, kx_load(L, in[7], kx_int(L, 0)), out[0]->dtype));
    }
    conv_close(L, &g, vg);
    if (in[1]->numel == 1 && in[6]->numel == 1 && in[7]->numel == 1)
        conv_describe(L, &g, in[0], in[3], bias, out[0],
                      &(kn_contract){.fixed = fixed,
                                     .clamp = fixed,
                                     .clo = clo,
                                     .chi = chi,
                                     .xz = in[2],
                                     .wz = wz,
                                     .xscale = in[1],
                                     .wscale = ws,
                                     .yscale = in[6],
                                     .yz = in[7]});
    return KN_OK;
}

/* ---- QLinearAdd (kiln's own: a QDQ residual add, ir/ops/quant.c) ---- */

/* The constant per-tensor parameters of a QLinearAdd, when all are constants. */
typedef struct qadd_consts {
    float as, bs, cs;
    int64_t az, bz, alo, ahi, blo, bhi;
    float cz;
} qadd_consts;

static bool const_scalar(const kn_kbuf *b) {
    return b && b->kind == KB_CONST && b->data && b->numel == 1;
}

static bool qadd_get_consts(kn_kbuf *const *in, int nin, qadd_consts *k) {
    for (int i = 0; i < 7; i++)
        if (i != 0 && i != 3 && !const_scalar(in[i])) return false;
    if (nin > 7 && !const_scalar(in[7])) return false;
    double lo, hi;
    k->as = (float)const_at(in[1], 0), k->bs = (float)const_at(in[4], 0);
    k->cs = (float)const_at(in[6], 0);
    k->az = (int64_t)const_at(in[2], 0), k->bz = (int64_t)const_at(in[5], 0);
    k->cz = nin > 7 ? (float)const_at(in[7], 0) : 0.0f;
    int_range(in[0]->dtype, &lo, &hi);
    k->alo = (int64_t)lo, k->ahi = (int64_t)hi;
    int_range(in[3]->dtype, &lo, &hi);
    k->blo = (int64_t)lo, k->bhi = (int64_t)hi;
    return true;
}

/* The quotient's rounded value plus cz, as the kernel computes it: by / cs (r 0) or by * r. */
static float qadd_round(const qadd_consts *k, float sum, float r) {
    float q = r != 0.0f ? sum * r : sum / k->cs;
    return nearbyintf(q) + k->cz;
}

/* The multiplier, if any (0 if none, or if some pair's rounded quotient is not finite), that
 * gives the division's result for every pair of 8-bit inputs after the clamp to [lo, hi]: 1/cs
 * rounded to float, or its float neighbours. Exhaustive over the 2^16 input pairs (the inputs are
 * 8-bit), so the multiplication is chosen only where it is identical, as ONNX's definition needs.
 */
static void qadd_check(const qadd_consts *k, int64_t lo, int64_t hi, float *mult) {
    float cand[3] = {1.0f / k->cs, 0, 0};
    cand[1] = nextafterf(cand[0], 0.0f), cand[2] = nextafterf(cand[0], 2.0f * cand[0]);
    bool ok[3] = {true, true, true};
    *mult = 0;
    for (int64_t a = k->alo; a <= k->ahi; a++)
        for (int64_t b = k->blo; b <= k->bhi; b++) {
            float sum = (float)(a - k->az) * k->as + (float)(b - k->bz) * k->bs;
            float ref = qadd_round(k, sum, 0.0f);
            if (!isfinite(ref)) return;
            ref = ref < (float)lo ? (float)lo : ref > (float)hi ? (float)hi : ref;
            for (int c = 0; c < 3; c++) {
                if (!ok[c]) continue;
                float v = qadd_round(k, sum, cand[c]);
                v = v < (float)lo ? (float)lo : v > (float)hi ? (float)hi : v;
                ok[c] = isfinite(cand[c]) && cand[c] != 0.0f && v == ref;
            }
        }
    for (int c = 0; c < 3; c++)
        if (ok[c]) {
            *mult = cand[c];
            return;
        }
}

/* The float32 form's clamped result for every pair of 8-bit inputs (the division by cs, as
 * the interpreter computes it), into ref[(a - alo) * 256 + (b - blo)]; false where some pair's
 * rounded quotient is not finite. */
static bool qadd_ref_table(const qadd_consts *k, int64_t lo, int64_t hi, int16_t *ref) {
    for (int64_t a = k->alo; a <= k->ahi; a++)
        for (int64_t b = k->blo; b <= k->bhi; b++) {
            float sum = (float)(a - k->az) * k->as + (float)(b - k->bz) * k->bs;
            float r = qadd_round(k, sum, 0.0f);
            if (!isfinite(r)) return false;
            r = r < (float)lo ? (float)lo : r > (float)hi ? (float)hi : r;
            ref[(a - k->alo) * 256 + (b - k->blo)] = (int16_t)r;
        }
    return true;
}

/* Whether every partial sum of a * q->ma + b * q->mb + q->round lies inside int32 for 8-bit
 * a, b: the sums are linear in a and b, so their extremes are at the corners. */
static bool qadd_int_fits(const qadd_consts *k, const kn_qadd *q) {
    const int64_t lim = INT64_C(1) << 31;
    int64_t as[2] = {k->alo, k->ahi}, bs[2] = {k->blo, k->bhi};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            int64_t pa = as[i] * q->ma, pab = pa + bs[j] * q->mb, v = pab + q->round;
            if (pa <= -lim || pa >= lim || pab <= -lim || pab >= lim || v <= -lim || v >= lim)
                return false;
        }
    return true;
}

/* Whether ((a * q->ma + b * q->mb + q->round) >> q->shift) + cz, saturated to [lo, hi], is
 * ref's value for every pair. */
static bool qadd_int_matches(const qadd_consts *k, const kn_qadd *q, int64_t cz, int64_t lo,
                             int64_t hi, const int16_t *ref) {
    for (int64_t a = k->alo; a <= k->ahi; a++)
        for (int64_t b = k->blo; b <= k->bhi; b++) {
            int64_t v = a * q->ma + b * q->mb + q->round;
            int64_t y = (v >> q->shift) + cz; /* an arithmetic shift: floor */
            y = y < lo ? lo : y > hi ? hi : y;
            if (y != ref[(a - k->alo) * 256 + (b - k->blo)]) return false;
        }
    return true;
}

/* An exact integer form of a float32 QLinearAdd of 8-bit operands with constant parameters
 * (qadd_consts): y = clamp(((a * ma + b * mb + round) >> shift) + cz) in int32 giving the
 * float32 form's byte for every one of the 2^16 input pairs, checked exhaustively here, so
 * ONNX's definition holds (as qadd_check does for the multiplier). Candidates: the ratios
 * as / cs and bs / cs rounded at each shift from 30 down to 12 (the highest first, as far as
 * every partial sum stays inside int32), each with its rounding constant 2^(shift-1) - az ma - bz
 * mb moved by 0, +-1, +-2, ..., +-64 units of 2^(shift-20) (the float32 form's own roundings put a
 * few pairs on the other side of a boundary than the exact sum; ResNet-18's layer1 adds need such a
 * move). False (q untouched) where none matches: the float32 form stays. About 150 candidates at
 * most, most rejected within a few pairs. */
static bool qadd_int_form(const qadd_consts *k, int64_t lo, int64_t hi, kn_qadd *q) {
    if (k->ahi - k->alo != 255 || k->bhi - k->blo != 255 || !(k->cz == floorf(k->cz))) return false;
    int16_t *ref = malloc(65536 * sizeof *ref);
    KN_ASSERT(ref);
    bool found = false;
    if (qadd_ref_table(k, lo, hi, ref)) {
        static const int moves[] = {0, 1, -1, 2, -2, 4, -4, 8, -8, 16, -16, 32, -32, 64, -64};
        for (int s = 30; s >= 12 && !found; s--) {
            double ma = llround(ldexp((double)k->as / (double)k->cs, s));
            double mb = llround(ldexp((double)k->bs / (double)k->cs, s));
            if (!(ma > 0 && mb > 0 && ma < 2147483648.0 && mb < 2147483648.0)) continue;
            kn_qadd c = {(int32_t)ma, (int32_t)mb, s, 0};
            int64_t r0 = (INT64_C(1) << (s - 1)) - k->az * (int64_t)c.ma - k->bz * (int64_t)c.mb;
            for (size_t m = 0; m < sizeof moves / sizeof *moves && !found; m++) {
                int64_t r = r0 + moves[m] * (s > 20 ? INT64_C(1) << (s - 20) : 1);
                if (r <= INT32_MIN || r >= INT32_MAX) continue;
                c.round = (int32_t)r;
                if (!qadd_int_fits(k, &c)) continue;
                if (qadd_int_matches(k, &c, (int64_t)k->cz, lo, hi, ref)) *q = c, found = true;
            }
        }
    }
    free(ref);
    return found;
}

/* Opens QLinearAdd's loops over y (one flat loop where a and b have y's size, else one a
 * dimension with a and b broadcast) and sets y's, a's and b's indices; returns how many
 * loops to close. */
static int qadd_loops(kn_lower *L, kn_kbuf *const *in, kn_kbuf *y, kn_kx **yi, kn_kx **ai,
                      kn_kx **bi) {
    if (in[0]->numel == y->numel && in[3]->numel == y->numel) {
        *yi = *ai = *bi = kx_var(L, kl_for(L, y->numel));
        return 1;
    }
    int v[KN_MAX_RANK];
    *yi = open_loops(L, y, v);
    *ai = kx_bcast_offset(L, in[0], y->rank, y->dims, v);
    *bi = kx_bcast_offset(L, in[3], y->rank, y->dims, v);
    return y->rank;
}

/* The fixed-point form's vectors on microcontrollers with 4-lane i32 vectors (Helium):
 * y[i .. i + 4) for i < numel rounded down to 4, where a, b and y have one size and are
 * 8-bit: acc = round + a * ma + b * mb as one VDUP and two VMLA by the scalar
 * multipliers, then kl_requant_hi32's form with mult 2^30 (the high word of acc * 2^30 is
 * floor(acc / 4)), round z * 2^(shift - 2) and t = shift - 2: floor(floor(acc / 4) /
 * 2^(shift - 2)) + z = floor(acc / 2^shift) + z, the scalar form's value, clamped to the
 * type and [lo, hi] as its saturation and clamp do (codegen/c/cprint.c KN_RQ4B: VMULH,
 * VADD, VSHL, VMAX, VMIN, VSTRB.32). Only where no sum can leave i32 (nor the scalar
 * form's) and shift - 2 is in [1, 30]. Returns the elements done (0: none). */
static int64_t qadd_fixed_vec(kn_lower *L, kn_kbuf *const *in, kn_kbuf *y, const kn_qadd *q,
                              int64_t z, int64_t lo, int64_t hi) {
    const kn_target *tg = L->target;
    if (!tg || tg->kind != KN_TARGET_MCU || kl_lanes(L, KN_I32) != 4 || y->numel < 4 ||
        in[0]->numel != y->numel || in[3]->numel != y->numel || q->shift < 3)
        return 0;
    for (int k = 0; k < 3; k++) {
        kn_dtype t = (k == 0 ? in[0] : k == 1 ? in[3] : y)->dtype;
        if (t != KN_U8 && t != KN_I8) return 0;
    }
    double tlo, thi, alo, ahi, blo, bhi;
    int_range(y->dtype, &tlo, &thi);
    int_range(in[0]->dtype, &alo, &ahi);
    int_range(in[3]->dtype, &blo, &bhi);
    double amax = fmax(fabs(alo), fabs(ahi)), bmax = fmax(fabs(blo), fabs(bhi));
    double acc = fabs((double)q->round) + amax * q->ma + bmax * q->mb;
    int t = q->shift - 2;
    if (acc >= 2147483647.0 || acc / 4 + fabs((double)z) * ldexp(1.0, t) >= 2147483647.0) return 0;
    int64_t nv = y->numel / 4;
    kn_kx *i = kx_mul(L, kx_var(L, kl_for(L, nv)), kx_int(L, 4));
    int va = kl_decl_vec(L, KN_I32, 4, kx_cast(L, KN_I32, kx_vload(L, in[0], i, 4)));
    int vb = kl_decl_vec(L, KN_I32, 4, kx_cast(L, KN_I32, kx_vload(L, in[3], i, 4)));
    int vs = kl_decl_vec(L, KN_I32, 4, kx_const(L, KN_I32, q->round));
    kl_set(L, vs, kx_add(L, kx_var(L, vs), kx_mul(L, kx_var(L, va), kx_const(L, KN_I32, q->ma))));
    kl_set(L, vs, kx_add(L, kx_var(L, vs), kx_mul(L, kx_var(L, vb), kx_const(L, KN_I32, q->mb))));
    int64_t l = lo > (int64_t)tlo ? lo : (int64_t)tlo, h = hi < (int64_t)thi ? hi : (int64_t)thi;
    kl_store(L, y, i,
             kl_requant_hi32(L, kx_var(L, vs), kx_const(L, KN_I32, 1 << 30),
                             kx_const(L, KN_I32, (double)(z * ((int64_t)1 << t))),
                             kx_const(L, KN_I32, t), l, h, y->dtype));
    kl_end(L);
    return nv * 4;
}

static kn_status qadd_int(kn_lower *L, kn_kbuf *const *in, kn_kbuf *y, const kn_qadd *q, int64_t z,
                          int64_t lo, int64_t hi);

/* The fixed-point form (--quantize's own adds, ir/requant.h kn_qadd): its multipliers and
 * rounding constant from the constant scales and zero points at compile time, then per
 * element ((a * ma + b * mb + round) >> shift) + cz in i32, saturated (USAT/SSAT on the
 * M4) and clamped. */
static kn_status lower_qlinearadd_fixed(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                        kn_kbuf *y, int64_t lo, int64_t hi) {
    kn_kbuf *cz = n->nin > 7 ? in[7] : NULL;
    for (int i = 1; i < 8; i++)
        if (i != 3 && (i < 7 || cz) && (!in[i]->data || !in[i]->data->data))
            return kn_diag(kl_ctx(L), n, KN_EUNSUPPORTED,
                           "fixed-point QLinearAdd needs constant scales and zero points");
    kn_qadd q = kn_qadd_make((float)const_at(in[1], 0), (float)const_at(in[4], 0),
                             (float)const_at(in[6], 0), (int64_t)const_at(in[2], 0),
                             (int64_t)const_at(in[5], 0));
    int64_t z = cz ? (int64_t)const_at(cz, 0) : 0;
    return qadd_int(L, in, y, &q, z, lo, hi);
}

/* The integer form's vectors on CPUs with 8 or more i32 lanes (x86): y[i .. i + 4 lanes) for
 * i < numel rounded down to 4 lanes, where a, b and y have one size and are 8-bit, as four
 * vectors of the form's i32 values declared first, then four stores of each clamped to
 * [max(lo, type's), min(hi, type's)] and narrowed: the statement shape the LLVM emitter
 * writes as one saturating pack chain on x86 with AVX-512 (store_packs_x86: ResNet-18's
 * adds, one 64-byte store a group, where LLVM's own vectorization of the scalar loop took a
 * vpmaxsd, a vpmovusdb and inserts per 16 outputs). All loads come before the stores, so an
 * add running in place reads what it would read one element at a time. Returns the
 * elements done (0: none). */
static int64_t qadd_int_vec(kn_lower *L, kn_kbuf *const *in, kn_kbuf *y, const kn_qadd *q,
                            int64_t z, int64_t lo, int64_t hi) {
    int lanes = kl_lanes(L, KN_I32);
    const kn_target *tg = L->target;
    if (!tg || tg->kind != KN_TARGET_CPU || lanes < 8 || in[0]->numel != y->numel ||
        in[3]->numel != y->numel || y->numel < 4 * lanes)
        return 0;
    for (int k = 0; k < 3; k++) {
        kn_dtype t = (k == 0 ? in[0] : k == 1 ? in[3] : y)->dtype;
        if (t != KN_U8 && t != KN_I8) return 0;
    }
    double tlo, thi;
    int_range(y->dtype, &tlo, &thi);
    int64_t l = lo > (int64_t)tlo ? lo : (int64_t)tlo, h = hi < (int64_t)thi ? hi : (int64_t)thi;
    int64_t n = y->numel / (4 * lanes);
    int iv = kl_decl(L, KN_I64, kx_mul(L, kx_var(L, kl_for(L, n)), kx_int(L, 4 * lanes)));
    int v[4];
    for (int k = 0; k < 4; k++) {
        kn_kx *i = kx_add(L, kx_var(L, iv), kx_int(L, k * lanes));
        kn_kx *pa =
            kx_mul(L, kx_cast(L, KN_I32, kx_vload(L, in[0], i, lanes)), kx_const(L, KN_I32, q->ma));
        kn_kx *pb =
            kx_mul(L, kx_cast(L, KN_I32, kx_vload(L, in[3], i, lanes)), kx_const(L, KN_I32, q->mb));
        kn_kx *r = kx_bin(L, KX_SHR, kx_add(L, kx_add(L, pa, pb), kx_const(L, KN_I32, q->round)),
                          kx_const(L, KN_I32, q->shift));
        if (z) r = kx_add(L, r, kx_const(L, KN_I32, (double)z));
        v[k] = kl_decl_vec(L, KN_I32, lanes, r);
    }
    for (int k = 0; k < 4; k++)
        kl_store(L, y, kx_add(L, kx_var(L, iv), kx_int(L, k * lanes)),
                 kx_cast(L, y->dtype,
                         kx_bin(L, KX_MIN,
                                kx_bin(L, KX_MAX, kx_var(L, v[k]), kx_const(L, KN_I32, (double)l)),
                                kx_const(L, KN_I32, (double)h))));
    kl_end(L);
    return n * 4 * lanes;
}

/* y = clamp(sat(((a * q->ma + b * q->mb + q->round) >> q->shift) + z)) in int32, per element
 * (Helium's vectors where qadd_fixed_vec applies, x86's where qadd_int_vec does). */
static kn_status qadd_int(kn_lower *L, kn_kbuf *const *in, kn_kbuf *y, const kn_qadd *qp, int64_t z,
                          int64_t lo, int64_t hi) {
    kn_qadd q = *qp;
    kn_kx *yi, *ai, *bi;
    int64_t done = qadd_fixed_vec(L, in, y, &q, z, lo, hi);
    if (!done) done = qadd_int_vec(L, in, y, &q, z, lo, hi);
    if (done == y->numel) return KN_OK;
    int nloops;
    if (done) { /* the elements the vectors left, one at a time */
        yi = ai = bi = kx_add(L, kx_var(L, kl_for(L, y->numel - done)), kx_int(L, done));
        nloops = 1;
    } else {
        nloops = qadd_loops(L, in, y, &yi, &ai, &bi);
    }
    kn_kx *pa = kx_mul(L, kx_cast(L, KN_I32, kx_load(L, in[0], ai)), kx_const(L, KN_I32, q.ma));
    kn_kx *pb = kx_mul(L, kx_cast(L, KN_I32, kx_load(L, in[3], bi)), kx_const(L, KN_I32, q.mb));
    kn_kx *r = kx_bin(L, KX_SHR, kx_add(L, kx_add(L, pa, pb), kx_const(L, KN_I32, q.round)),
                      kx_const(L, KN_I32, q.shift));
    r = kx_add(L, r, kx_const(L, KN_I32, (double)z));
    bool u = y->dtype == KN_U8 || y->dtype == KN_U16;
    int bits = 8 * (int)kn_dtype_get(y->dtype)->size;
    double tlo, thi;
    int_range(y->dtype, &tlo, &thi);
    r = bits <= 16 ? kx_sat(L, r, bits, u)
                   : kx_bin(L, KX_MIN, kx_bin(L, KX_MAX, r, kx_const(L, KN_I32, tlo)),
                            kx_const(L, KN_I32, thi));
    if (lo > (int64_t)tlo) r = kx_bin(L, KX_MAX, r, kx_const(L, KN_I32, (double)lo));
    if (hi < (int64_t)thi) r = kx_bin(L, KX_MIN, r, kx_const(L, KN_I32, (double)hi));
    kl_store(L, y, yi, kx_cast(L, y->dtype, r));
    kl_end_n(L, nloops);
    return KN_OK;
}

/* y = clamp(sat(round((float)((f32)(a - az) * as + (f32)(b - bz) * bs) / cs) + cz)), all in
 * float32 as the interpreter and the float graph it replaces compute it (no multiply-add
 * is fused: the kernel IR says where one is), the rounding, zero point and clamp as
 * kl_requant's (requant_f32's int32 path on microcontrollers; a NaN sum gives 0). One pass over the
 * two 8-bit inputs. With constant parameters (the qdq pass's), the division is a multiplication
 * where that gives the same bytes for every input pair (qadd_check). */
/* QLinearAdd with KN_QADD_F64_ATTR (ONNX Runtime's contrib QLinearAdd): the formula in
 * double, (double(a - az) as + double(b - bz) bs) / cs rounded half to even; each product
 * is exact in double (a 9-bit integer times a float32), so a fused multiply-add gives the
 * same sum. */
static kn_status lower_qlinearadd_f64(kn_lower *L, const kn_node *n, kn_kbuf *const *in, kn_kbuf *y,
                                      int64_t lo, int64_t hi) {
    kn_kbuf *cz = n->nin > 7 ? in[7] : NULL;
    static const int scale_at[3] = {1, 4, 6}; /* as, bs, cs */
    int vs[3];
    for (int i = 0; i < 3; i++)
        vs[i] = kl_decl(L, KN_F64, kx_cast(L, KN_F64, kx_load(L, in[scale_at[i]], kx_int(L, 0))));
    int vaz = kl_decl(L, KN_I32, kx_cast(L, KN_I32, kx_load(L, in[2], kx_int(L, 0))));
    int vbz = kl_decl(L, KN_I32, kx_cast(L, KN_I32, kx_load(L, in[5], kx_int(L, 0))));
    int vcz = kl_decl(
        L, KN_I32, cz ? kx_cast(L, KN_I32, kx_load(L, cz, kx_int(L, 0))) : kx_const(L, KN_I32, 0));
    kn_kx *yi, *ai, *bi;
    int nloops = qadd_loops(L, in, y, &yi, &ai, &bi);
    kn_kx *da = kx_sub(L, kx_cast(L, KN_I32, kx_load(L, in[0], ai)), kx_var(L, vaz));
    kn_kx *db = kx_sub(L, kx_cast(L, KN_I32, kx_load(L, in[3], bi)), kx_var(L, vbz));
    kn_kx *sum = kx_add(L, kx_mul(L, kx_cast(L, KN_F64, da), kx_var(L, vs[0])),
                        kx_mul(L, kx_cast(L, KN_F64, db), kx_var(L, vs[1])));
    kn_kx *q = kx_bin(L, KX_DIV, sum, kx_var(L, vs[2]));
    kl_store(L, y, yi,
             requant_rounded(L, q, kx_var(L, vcz), y->dtype, KN_F64, (double)lo, (double)hi));
    kl_end_n(L, nloops);
    return KN_OK;
}

/* Whether a float32 QLinearAdd may take its exact integer form (qadd_int_form) here: 8-bit
 * a, b and y, on CPUs with at least 8 lanes of i32 (x86: ResNet-18 int8's 8 adds
 * vectorize in about 10 instructions a vector of 16 outputs where the float32 steps took
 * about 15, docs/quantization.md "r18ep"). Microcontrollers keep requant_f32's form
 * (firmware bytes unchanged), OpenCL and 4-lane CPUs the float32 steps. */
static bool qadd_int_suits(kn_lower *L, kn_kbuf *const *in, const kn_kbuf *y) {
    for (int i = 0; i < 3; i++) {
        kn_dtype t = (i == 0 ? in[0] : i == 1 ? in[3] : y)->dtype;
        if (t != KN_U8 && t != KN_I8) return false;
    }
    return L->target && L->target->kind == KN_TARGET_CPU && kl_lanes(L, KN_I32) >= 8;
}

static kn_status lower_qlinearadd(kn_lower *L, const kn_node *n, kn_kbuf *const *in,
                                  kn_kbuf *const *out) {
    kn_kbuf *y = out[0], *cz = n->nin > 7 ? in[7] : NULL;
    int64_t lo, hi;
    fixed_range(n, y->dtype, &lo, &hi);
    if (kn_fixed_point(n)) return lower_qlinearadd_fixed(L, n, in, y, lo, hi);
    if (kn_attr_flag(n, KN_QADD_F64_ATTR)) return lower_qlinearadd_f64(L, n, in, y, lo, hi);
    qadd_consts k;
    float mult = 0;
    bool k_ok = qadd_get_consts(in, n->nin, &k);
    kn_qadd qi;
    if (k_ok && qadd_int_suits(L, in, y) && qadd_int_form(&k, lo, hi, &qi))
        return qadd_int(L, in, y, &qi, (int64_t)k.cz, lo, hi);
    if (k_ok) qadd_check(&k, lo, hi, &mult);
    int vas = kl_decl(L, KN_F32, kx_cast(L, KN_F32, kx_load(L, in[1], kx_int(L, 0))));
    int vbs = kl_decl(L, KN_F32, kx_cast(L, KN_F32, kx_load(L, in[4], kx_int(L, 0))));
    int vcs = kl_decl(L, KN_F32,
                      mult != 0.0f ? kx_const(L, KN_F32, mult)
                                   : kx_cast(L, KN_F32, kx_load(L, in[6], kx_int(L, 0))));
    int vaz = kl_decl(L, KN_I32, kx_cast(L, KN_I32, kx_load(L, in[2], kx_int(L, 0))));
    int vbz = kl_decl(L, KN_I32, kx_cast(L, KN_I32, kx_load(L, in[5], kx_int(L, 0))));
    /* a constant output zero point of 0 is not added on CPUs: round(q) + 0.0f differs from
     * round(q) only in the sign of a zero, which the clamp and the conversion do not see
     * (ResNet-18's 8 adds, all before a Relu: one vaddps fewer a vector) */
    bool no_cz = k_ok && k.cz == 0.0f && !requant_int32_path(L);
    int vcz = no_cz ? -1
                    : kl_decl(L, KN_I32,
                              cz ? kx_cast(L, KN_I32, kx_load(L, cz, kx_int(L, 0)))
                                 : kx_const(L, KN_I32, 0));
    kn_kx *yi, *ai, *bi;
    int nloops = qadd_loops(L, in, y, &yi, &ai, &bi);
    kn_kx *da = kx_sub(L, kx_cast(L, KN_I32, kx_load(L, in[0], ai)), kx_var(L, vaz));
    kn_kx *db = kx_sub(L, kx_cast(L, KN_I32, kx_load(L, in[3], bi)), kx_var(L, vbz));
    /* each product rounded to f32 before the sum (OpenCL: the emitter's FP_CONTRACT OFF) */
    kn_kx *sum = kx_add(L, kx_mul(L, kx_cast(L, KN_F32, da), kx_var(L, vas)),
                        kx_mul(L, kx_cast(L, KN_F32, db), kx_var(L, vbs)));
    kn_kx *q = kx_bin(L, mult != 0.0f ? KX_MUL : KX_DIV, sum, kx_var(L, vcs));
    kl_store(L, y, yi,
             requant_int32_path(L)
                 ? requant_f32(L, q, kx_var(L, vcz), y->dtype, (double)lo, (double)hi)
                 : requant_rounded(L, q, no_cz ? NULL : kx_var(L, vcz), y->dtype, KN_F32,
                                   (double)lo, (double)hi));
    kl_end_n(L, nloops);
    return KN_OK;
}

const kn_oplower kn_lower_quant[] = {
    {KN_OP_QUANTIZELINEAR, lower_quantize},
    {KN_OP_DEQUANTIZELINEAR, lower_dequantize},
    {KN_OP_DYNAMICQUANTIZELINEAR, lower_dynquant},
    {KN_OP_MATMULINTEGER, lower_matmulint},
    {KN_OP_QLINEARMATMUL, lower_qlinearmatmul},
    {KN_OP_CONVINTEGER, lower_convint},
    {KN_OP_QLINEARCONV, lower_qlinearconv},
    {KN_OP_QLINEARADD, lower_qlinearadd},
    {KN_OP_COUNT, 0},
};
