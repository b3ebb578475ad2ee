/* Integer contractions in the register tiles of the kernel passes (passes/tile_int.c):
 * what an integer depthwise convolution needs to run in the depthwise pass's tiles
 * (passes/depthwise.c), and the requantizing store they share. */
#ifndef KN_PASSES_TILE_INT_H
#define KN_PASSES_TILE_INT_H

#include "ir/kir.h"

/* Whether integer depthwise convolution d (QLinearConv or ConvInteger with group == C
 * == M) can run in the depthwise pass's f32 tiles exactly: constant weights, weight
 * zero points, bias and scales, one constant input zero point, no epilogue, and every
 * partial sum an integer below 2^24 (taps x 255 x max |w - wz| + max |bias|), so f32
 * holds it exactly on every backend. */
bool kt_dw_int_suits(const kn_contract *d);
/* kt_dw_int_suits in any layout (the channels-last tiles of passes/depthwise.c). */
bool kt_dw_int_exact(const kn_contract *d);
/* d's packed per-channel constants as f32 into pk ([c][1 + kh*kw]): the bias, then
 * w - wz[c] of each tap. */
void kt_dw_int_pack(const kn_contract *d, float *pk);
/* d's input zero point (0 without one). */
double kt_int_xz(const kn_contract *d);
/* The integer dot product (KX_DOT kind, kn_dot of targets/target.h) for the tiles of
 * integer contraction d with constant weights: the schedule's dot= (ov, may be NULL)
 * where set, else the target's; a four-part kind falls back to KN_DOT_S16X2 where some
 * w - wz is outside [-128, 127]. 0: none. */
int kt_int_dot_kind(const struct kn_target *tg, const kn_contract *d, const kn_sched *ov);
/* What the dot of `kind` adds to each 8-bit input of dtype x so it has the signedness
 * the instruction reads (u8s8x4: +128 for i8; s8s8x4: -128 for u8; else 0). The
 * tiles take (xz + xoff) times the weights' sum off the accumulator's init. */
int64_t kt_int_xoff(int kind, kn_dtype x);
/* n (<= 32 / bits) input values (scalars or vectors) packed into an i32 word as a dot
 * reads them: part g holds vals[g] + xoff in its low `bits` (8 or 16) bits. */
kn_kx *kt_dot_word(kn_lower *L, int bits, int64_t xoff, kn_kx *const *vals, int n);
/* How an integer contraction's tiles requantize: the tables of its columns.
 *   mult NULL:               y is the i32 accumulator itself (ConvInteger, MatMulInteger)
 *   mult f64, shift NULL:    round_half_even(acc * mult) in double (ONNX mode; or fixed
 *                            point where f64 is exact, kt_int_tables_f64)
 *   round set:               the high-word form (kn_qmul_hi32): mult, round and shift
 *                            (t = shift - 32) i32
 *   shift i8:                microcontrollers' 32-bit form (kl_qmul_shift32)
 *   else                     fixed point in int64 (kl_requant_fixed): mult, shift i32 */
typedef struct kt_rq {
    kn_kbuf *mult, *shift, *round;
    /* 0, or 4: the high-word form as one table of records of 4 i32 (kt_int_tables_rec;
     * round and shift then point at the same table as mult): column c's accumulator
     * init at [4c], its mult, round and shift at [4c + 1], [4c + 2], [4c + 3]. Scalar
     * stores only. */
    int rec;
    /* 0, or the lanes L of the vector stores: the high-word form as one table of groups
     * of L columns (kt_int_tables_vrec; round and shift point at mult's table): the group
     * of columns c .. c + L - 1 (c a multiple of L) holds their L mults at [3c], their L
     * rounds at [3c + L] and their L shifts negated at [3c + 2L] (the requantization reads
     * 0 - that: Helium's VSHL by a vector shifts right by a negative count, so the C
     * takes the entry as it is, codegen/c/cprint.c KN_RQ4IVN). Read as vectors of L lanes
     * at multiples of L, or one column at a time. */
    int vrec;
} kt_rq;

/* The requantization tables of d's m columns into *q: fixed point (d->fixed,
 * ir/requant.h), else the f64 multipliers of ONNX mode. */
void kt_int_tables(kn_lower *L, const kn_contract *d, kt_rq *q);
/* kt_int_tables with `pad` more entries past the m columns (mult 0: y = y_zp), so
 * vectors of columns may be read past the last one. On CPU targets and with pad > 0 (the
 * vector stores), a fixed-point d takes the high-word form where every column allows it
 * (kn_qmul_hi32, with d's accumulator bound from its constant weights and bias): about a third of
 * the int64 form's instructions per vector. */
void kt_int_tables_padded(kn_lower *L, const kn_contract *d, int64_t pad, kt_rq *q);
/* The high-word form's tables (kn_qmul_hi32) of a fixed-point d's columns and `pad` more
 * (mult 0) on CPU targets and microcontrollers with 128-bit vectors (Helium's 4-lane
 * tiles, passes/tile.c); false (q cleared) where a column does not allow it. */
bool kt_int_tables_hi32(kn_lower *L, const kn_contract *d, int64_t pad, kt_rq *q);
/* The tables of Helium's reduction tiles (passes/tile.c, kt_tile.wide: one scalar
 * accumulator an output, requantized and stored one at a time): the high-word form
 * where every column allows it, on any target (SMMUL, an add, a shift and SSAT an
 * output on Arm, where kl_requant_fixed32 takes a 64-bit add and a parity test more);
 * else kt_int_tables. */
void kt_int_tables_red(kn_lower *L, const kn_contract *d, kt_rq *q);
/* The high-word form's three tables and init (a constant i32 table of the accumulators'
 * init per column, at least m of them: the packed bias) as one table of records
 * (kt_rq.rec): a tile's columns then read their init and tables from one pointer at
 * constant offsets (the C compiler pairs them into LDRDs), where four tables kept four
 * pointers, each stepped per tile of columns, and spilled some of them (the pointwise
 * pairs, passes/tile.c). False (q cleared) where a column does not allow the form. */
bool kt_int_tables_rec(kn_lower *L, const kn_contract *d, const kn_kbuf *init, kt_rq *q);
/* kt_int_tables_hi32's three tables of d's columns and `pad` more (mult 0) as one
 * table of groups of `lanes` columns (kt_rq.vrec): a vector's mult, round and shift
 * are then at constant offsets from one pointer (Helium's VLDRW.32 takes an immediate
 * offset, not a register one, so three tables took an address add each, and kept three
 * pointers where the group's index changes). The same values, the same bits; false (q
 * cleared) where kt_int_tables_hi32 is. */
bool kt_int_tables_vrec(kn_lower *L, const kn_contract *d, int64_t pad, int lanes, kt_rq *q);
/* The accumulators' init of column col from records of 4 (kt_int_tables_rec). */
kn_kx *kt_int_rec_init(kn_lower *L, const kt_rq *q, kn_kx *col);
/* Fixed-point requantization (d->fixed) in f64 where it is exact, on CPU targets with
 * f64 vectors: q->mult the table of M = mult * 2^-shift of each column (kn_qmul; `pad`
 * zeros past the last), for kt_int_store(_vec) with shift NULL, which computes
 * round_half_even(acc * M) in double. That is the fixed-point value exactly when
 * |acc| <= 2^22 (the product, acc x mult / 2^shift, then has at most 53 significant
 * bits): d's bound from its constant weights and bias (255 x sum |w - wz| + |bias| per
 * column) must be under it. False (and q cleared) where it does not apply. The depthwise
 * tiles use it where the high-word form does not apply. */
bool kt_int_tables_f64(kn_lower *L, const kn_contract *d, int64_t pad, kt_rq *q);
/* The requantized vector of `lanes` columns from col of accumulator vector acc (i32),
 * reading vectors of the tables (padded past the last column, kt_int_tables_padded). */
kn_kx *kt_int_store_vec(kn_lower *L, const kn_contract *d, const kt_rq *q, kn_kx *acc, kn_kx *col,
                        int lanes);
/* Whether integer contraction d's epilogue (a fused float tail, passes/dynq.c) suits
 * kt_int_epi: every operand float32 and one value, or one per column (MatMul: numel N,
 * varying along its last axis) or per output channel (Conv: numel m, varying along the
 * channel axis of NCHW y alone). */
bool kt_int_epi_ok(const kn_contract *d);
/* The fused float tail of d on accumulator acc (i32, scalar or vector of lanes columns
 * from col): float32(acc), then d's epilogue steps in order, each operand read at the
 * column (a vector of them) or as its one value. acc itself where d has no epilogue. */
kn_kx *kt_int_epi(kn_lower *L, const kn_contract *d, kn_kx *acc, kn_kx *col);
/* The value stored at y for integer accumulator acc (i32, scalar or vector) of column
 * col: acc itself, or requantized through the tables of kt_int_tables. */
kn_kx *kt_int_store(kn_lower *L, const kn_contract *d, const kt_rq *q, kn_kx *acc, kn_kx *col);

#endif
