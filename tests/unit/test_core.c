/* Unit tests of the IR core: dtype conversions (values derived by hand from the
 * IEEE 754 binary16 / bfloat16 encodings), broadcasting, axes, and .npy / .pb
 * round trips and rejections. */
#include "frontend/onnx.h"
#include "frontend/tensorfile.h"
#include "ir/ops.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void test_half(void) {
    static const struct {
        float f;
        uint16_t h;
    } cases[] = {
        {0.0f, 0x0000},           {1.0f, 0x3c00}, {-2.0f, 0xc000},
        {65504.0f, 0x7bff},       {0.5f, 0x3800}, {5.9604645e-08f, 0x0001},
        {6.1035156e-05f, 0x0400}, {1e6f, 0x7c00}, {1.0009766f, 0x3c01},
        {1.00048828125f, 0x3c00}, /* tie: to even */
        {-INFINITY, 0xfc00},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        CHECK(kn_f32_to_f16(cases[i].f) == cases[i].h);
    for (size_t i = 0; i < 7; i++) CHECK(kn_f16_to_f32(cases[i].h) == cases[i].f);
    CHECK(isnan(kn_f16_to_f32(0x7e00)));
    CHECK(kn_f32_to_bf16(1.0f) == 0x3f80);
    CHECK(kn_f32_to_bf16(-3.0f) == 0xc040);
    CHECK(kn_bf16_to_f32(0x4049) == 3.140625f);
    CHECK(kn_f32_to_bf16(1.00390625f) == 0x3f80); /* tie 0x3f80_8000 rounds to even */
}

/* float8 (ONNX Cast opset 19, its saturate tables) and packed int4, values derived by
 * hand from the formats: E4M3FN 1.0 = 2^0 -> biased exponent 7 -> 0x38; 0.3 lies in
 * [2^-2, 2^-1), spacing 2^-5: 9.6 -> 10 steps = 0.3125 = 1.25 * 2^-2 -> 0x2A; 464 is
 * halfway between 448 (mantissa 110) and 480 (111): to even, 448; 465 rounds to 480,
 * past the maximum. */
static void test_float8(void) {
    static const struct {
        kn_f8_kind k;
        double x;
        uint8_t sat, nosat;
    } cases[] = {
        {KN_F8_E4M3FN, 1.0, 0x38, 0x38},
        {KN_F8_E4M3FN, 0.3, 0x2a, 0x2a},
        {KN_F8_E4M3FN, 448, 0x7e, 0x7e},
        {KN_F8_E4M3FN, 464, 0x7e, 0x7e},
        {KN_F8_E4M3FN, 465, 0x7e, 0x7f},
        {KN_F8_E4M3FN, -500, 0xfe, 0xff},
        {KN_F8_E4M3FN, INFINITY, 0x7e, 0x7f},
        {KN_F8_E4M3FN, -INFINITY, 0xfe, 0xff},
        {KN_F8_E4M3FN, -0.0, 0x80, 0x80},
        {KN_F8_E4M3FN, NAN, 0x7f, 0x7f},
        {KN_F8_E4M3FN, 0.001953125, 0x01, 0x01},   /* 2^-9: the smallest subnormal */
        {KN_F8_E4M3FN, 0.0009765625, 0x00, 0x00},  /* 2^-10: tie, to even (0) */
        {KN_F8_E4M3FN, 0.00146484375, 0x01, 0x01}, /* 1.5 * 2^-10 */
        {KN_F8_E4M3FN, -0.0001, 0x80, 0x80},       /* underflows to -0 */
        {KN_F8_E4M3FNUZ, 1.0, 0x40, 0x40},
        {KN_F8_E4M3FNUZ, -0.0, 0x00, 0x00},
        {KN_F8_E4M3FNUZ, -0.0001, 0x00, 0x00}, /* no -0: +0, not the NaN code */
        {KN_F8_E4M3FNUZ, 240, 0x7f, 0x7f},
        {KN_F8_E4M3FNUZ, -250, 0xff, 0x80},
        {KN_F8_E4M3FNUZ, INFINITY, 0x80, 0x80},
        {KN_F8_E4M3FNUZ, 0.0009765625, 0x01, 0x01}, /* 2^-10 */
        {KN_F8_E5M2, 1.0, 0x3c, 0x3c},
        {KN_F8_E5M2, 57344, 0x7b, 0x7b},
        {KN_F8_E5M2, 60000, 0x7b, 0x7b}, /* 7.32 steps of 2^13: 7 */
        {KN_F8_E5M2, 61440, 0x7b, 0x7c}, /* 7.5: to even, 8 = 65536, past the maximum */
        {KN_F8_E5M2, -INFINITY, 0xfb, 0xfc},
        {KN_F8_E5M2, -0.0, 0x80, 0x80},
        {KN_F8_E5M2, 1.52587890625e-05, 0x01, 0x01}, /* 2^-16 */
        {KN_F8_E5M2FNUZ, 1.0, 0x40, 0x40},
        {KN_F8_E5M2FNUZ, 57344, 0x7f, 0x7f},
        {KN_F8_E5M2FNUZ, 1e6, 0x7f, 0x80},
        {KN_F8_E5M2FNUZ, -INFINITY, 0x80, 0x80},
        {KN_F8_E5M2FNUZ, -0.0, 0x00, 0x00},
        {KN_F8_E5M2FNUZ, 7.62939453125e-06, 0x01, 0x01}, /* 2^-17 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        CHECK(kn_f8_encode(cases[i].x, cases[i].k, true) == cases[i].sat);
        CHECK(kn_f8_encode(cases[i].x, cases[i].k, false) == cases[i].nosat);
    }
    CHECK(kn_f8_decode(0x38, KN_F8_E4M3FN) == 1.0 && kn_f8_decode(0x7e, KN_F8_E4M3FN) == 448);
    CHECK(isnan(kn_f8_decode(0xff, KN_F8_E4M3FN)) && kn_f8_decode(0xff, KN_F8_E4M3FNUZ) == -240);
    CHECK(isnan(kn_f8_decode(0x80, KN_F8_E4M3FNUZ)) && isnan(kn_f8_decode(0x80, KN_F8_E5M2FNUZ)));
    CHECK(kn_f8_decode(0x7c, KN_F8_E5M2) == INFINITY && isnan(kn_f8_decode(0x7d, KN_F8_E5M2)));
    CHECK(kn_f8_decode(0x01, KN_F8_E5M2FNUZ) == 7.62939453125e-06);
    CHECK(kn_f8_decode(0xfb, KN_F8_E5M2) == -57344 && kn_f8_decode(0x2a, KN_F8_E4M3FN) == 0.3125);
    for (int k = KN_F8_E4M3FN; k <= KN_F8_E5M2FNUZ; k++) /* every finite code round-trips */
        for (int c = 0; c < 256; c++) {
            double v = kn_f8_decode((uint8_t)c, (kn_f8_kind)k);
            if (!isnan(v) && !isinf(v)) CHECK(kn_f8_encode(v, (kn_f8_kind)k, false) == c);
        }
    uint8_t p[2] = {0, 0xa5};
    kn_i4_set(p, 0, -1);
    kn_i4_set(p, 1, 7);
    CHECK(p[0] == 0x7f && kn_i4_get(p, 0, true) == -1 && kn_i4_get(p, 0, false) == 15);
    kn_i4_set(p, 1, -8);
    CHECK(p[0] == 0x8f && kn_i4_get(p, 1, true) == -8 && kn_i4_get(p, 1, false) == 8);
    CHECK(kn_i4_get(p, 2, false) == 5 && kn_i4_get(p, 3, true) == -6); /* 0xa5: 5, then 0xa */
}

static void test_convert(void) {
    uint8_t u8[2];
    kn_store_f64(u8, KN_U8, 0, 3.9);
    CHECK(u8[0] == 3);
    kn_store_f64(u8, KN_BOOL, 1, -0.5);
    CHECK(u8[1] == 1);
    uint64_t u64 = 0;
    kn_store_f64(&u64, KN_U64, 0, 1.8446744073709552e19 / 2 + 2048);
    CHECK(u64 == (1ull << 63) + 2048);
    int64_t i64 = INT64_MIN;
    CHECK(kn_load_i64(&i64, KN_I64, 0) == INT64_MIN);
    CHECK(kn_dtype_parse("float") == KN_F32 && kn_dtype_parse("i64") == KN_I64);
    CHECK(kn_dtype_parse("nope") == KN_UNDEF);
}

static void test_broadcast(void) {
    kn_ctx cx;
    kn_ctx_init(&cx, "t");
    kn_type a = kn_type_make(KN_F32, 3, (int64_t[]){2, 1, 4});
    kn_type b = kn_type_make(KN_F32, 2, (int64_t[]){3, 1});
    kn_type out = a;
    const kn_type *ins[] = {&a, &b};
    CHECK(kn_broadcast(&cx, NULL, 2, ins, &out) == KN_OK);
    CHECK(out.rank == 3 && out.dims[0] == 2 && out.dims[1] == 3 && out.dims[2] == 4);
    int64_t st[3];
    kn_bcast_strides(&b, 3, out.dims, st);
    CHECK(st[0] == 0 && st[1] == 1 && st[2] == 0);
    CHECK(kn_bcast_offset(4 * 2 + 3, 3, out.dims, st) == 2); /* index (0,2,3) -> b[2] */
    kn_type c = kn_type_make(KN_F32, 1, (int64_t[]){5});
    const kn_type *bad[] = {&a, &c};
    CHECK(kn_broadcast(&cx, NULL, 2, bad, &out) == KN_EINVAL);
    CHECK(strstr(cx.msg, "cannot be broadcast") != NULL);
    /* kn_bcast_into: a [2,1,4], b [3,1], c [5] against y [2,3,5,4] and o [2,3,4] */
    kn_type y = kn_type_make(KN_F32, 4, (int64_t[]){2, 3, 5, 4});
    kn_type o = kn_type_make(KN_F32, 3, (int64_t[]){2, 3, 4});
    kn_type r = kn_type_make(KN_F32, 3, (int64_t[]){3, 1, 4});
    kn_type s = kn_type_scalar(KN_F32), d = kn_type_unknown(KN_F32);
    CHECK(kn_bcast_into(&o, &o) && kn_bcast_into(&a, &o) && kn_bcast_into(&b, &o));
    CHECK(kn_bcast_into(&s, &y) && kn_bcast_into(&r, &y));
    CHECK(!kn_bcast_into(&a, &y));                           /* 2 against 3 */
    CHECK(!kn_bcast_into(&b, &y));                           /* 3 against 5 */
    CHECK(!kn_bcast_into(&c, &y) && !kn_bcast_into(&c, &o)); /* 5 against 4 */
    CHECK(!kn_bcast_into(&o, &a));                           /* would grow a's 1 */
    CHECK(!kn_bcast_into(&y, &o));                           /* higher rank */
    CHECK(!kn_bcast_into(&d, &y) && !kn_bcast_into(&s, &d)); /* not static */
    int ax;
    kn_ctx_init(&cx, "t");
    CHECK(kn_axis(&cx, NULL, -1, 4, 0, &ax) == KN_OK && ax == 3);
    CHECK(kn_axis(&cx, NULL, 4, 4, 0, &ax) == KN_EINVAL);
}

/* kn_arena_release frees a big request's own chunk and nothing else: a small one
 * shares a chunk, an address inside a chunk or of another arena is not one. */
static void test_arena_release(void) {
    kn_arena *a = kn_arena_create(), *b = kn_arena_create();
    unsigned char *small = kn_arena_alloc(a, 100);
    unsigned char *big = kn_arena_alloc(a, 1 << 20), *big2 = kn_arena_alloc(a, 1 << 20);
    size_t used = kn_arena_used(a);
    CHECK(!kn_arena_release(a, small));
    CHECK(!kn_arena_release(a, big + 64));
    CHECK(!kn_arena_release(b, big));
    CHECK(kn_arena_release(a, big));
    CHECK(kn_arena_used(a) == used - (1 << 20));
    CHECK(!kn_arena_release(a, big)); /* already gone */
    big2[(1 << 20) - 1] = 1;          /* the other big request is still there */
    small[99] = 1;
    CHECK(kn_arena_release(a, big2));
    kn_arena_destroy(a);
    kn_arena_destroy(b);
}

/* kn_arena_detach hands a big request's chunk over without freeing it, at the same
 * address: another arena can adopt it (kn_arena_attach), or the caller frees it. */
static void test_arena_detach(void) {
    kn_arena *a = kn_arena_create(), *b = kn_arena_create();
    unsigned char *small = kn_arena_alloc(a, 100);
    unsigned char *big = kn_arena_alloc(a, 1 << 20), *big2 = kn_arena_alloc(a, 1 << 20);
    size_t used = kn_arena_used(a), bused = kn_arena_used(b);
    big[0] = 7, big[(1 << 20) - 1] = 9;
    CHECK(!kn_arena_detach(a, small));
    CHECK(!kn_arena_detach(a, big + 64));
    CHECK(!kn_arena_detach(b, big));
    void *blk = kn_arena_detach(a, big);
    CHECK(blk && kn_arena_used(a) == used - (1 << 20));
    CHECK(!kn_arena_release(a, big)); /* no longer a's */
    kn_arena_attach(b, blk);
    CHECK(kn_arena_used(b) == bused + (1 << 20));
    CHECK(big[0] == 7 && big[(1 << 20) - 1] == 9);  /* the same memory, kept */
    unsigned char *small2 = kn_arena_alloc(b, 100); /* b's small requests still work */
    small2[99] = 1;
    void *blk2 = kn_arena_detach(a, big2);
    CHECK(blk2);
    big2[(1 << 20) - 1] = 1;
    kn_arena_block_free(blk2);
    kn_arena_destroy(a);
    CHECK(big[(1 << 20) - 1] == 9); /* b's now: outlives a */
    CHECK(kn_arena_release(b, big));
    kn_arena_destroy(b);
}

/* kn_big_alloc: zeroed, 64-byte aligned and writable to its last byte at every size; a
 * big block is a mapping on a huge-page boundary (its head, 64 bytes, first), so its
 * huge pages line up with the data. */
static void test_big_alloc(void) {
    size_t sizes[] = {
        0, 1, 100, KN_BIG_ALLOC - 65, KN_BIG_ALLOC - 64, KN_BIG_ALLOC, 5 * KN_BIG_ALLOC / 2 + 3};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        size_t n = sizes[i];
        unsigned char *p = kn_big_alloc(n);
        CHECK(p && (uintptr_t)p % 64 == 0);
        if (!p) continue;
        size_t nonzero = 0;
        for (size_t j = 0; j < n; j++) nonzero += p[j] != 0;
        CHECK(nonzero == 0);
        if (n) p[n - 1] = 1, p[0] = 1;
        if (n + 64 >= KN_BIG_ALLOC) CHECK((uintptr_t)(p - 64) % KN_BIG_ALLOC == 0);
        kn_big_free(p);
    }
    kn_big_free(NULL);
    CHECK(kn_big_alloc(KN_ARENA_MAX_ALLOC + 1) == NULL);
    /* an arena's big request comes from it: zeroed, aligned, released */
    kn_arena *a = kn_arena_create();
    unsigned char *big = kn_arena_alloc(a, 3 * KN_BIG_ALLOC);
    CHECK(big && (uintptr_t)big % 64 == 0 && big[0] == 0 && big[3 * KN_BIG_ALLOC - 1] == 0);
    big[3 * KN_BIG_ALLOC - 1] = 1;
    CHECK(kn_arena_release(a, big));
    kn_arena_destroy(a);
}

static const char *tmpdir;

static void test_npy(void) {
    kn_ctx cx;
    kn_ctx_init(&cx, NULL);
    kn_arena *a = kn_arena_create();
    char path[512];
    static const kn_dtype types[] = {KN_F32, KN_F64, KN_I64, KN_U8, KN_BOOL, KN_F16, KN_I32};
    for (size_t k = 0; k < sizeof types / sizeof *types; k++) {
        kn_tensor *t = kn_tensor_make(a, types[k], 2, (int64_t[]){2, 3});
        for (int i = 0; i < 6; i++) kn_store_f64(t->data, types[k], (size_t)i, i % 2);
        snprintf(path, sizeof path, "%s/t%zu.npy", tmpdir, k);
        CHECK(kn_tensorfile_write(&cx, path, t) == KN_OK);
        kn_tensor *r = NULL;
        CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &r) == KN_OK);
        CHECK(r && kn_type_equal(&r->type, &t->type) &&
              !memcmp(r->data, t->data, kn_tensor_nbytes(t)));
        snprintf(path, sizeof path, "%s/t%zu.pb", tmpdir, k);
        CHECK(kn_tensorfile_write(&cx, path, t) == KN_OK);
        r = NULL;
        CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &r) == KN_OK);
        CHECK(r && kn_type_equal(&r->type, &t->type) &&
              !memcmp(r->data, t->data, kn_tensor_nbytes(t)));
    }
    /* scalar and 1-D shapes in the header */
    kn_tensor *s = kn_tensor_scalar_f64(a, KN_F32, 2.5);
    snprintf(path, sizeof path, "%s/s.npy", tmpdir);
    CHECK(kn_tensorfile_write(&cx, path, s) == KN_OK);
    kn_tensor *r = NULL;
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &r) == KN_OK && r->type.rank == 0 &&
          ((float *)r->data)[0] == 2.5f);
    /* hand-written headers: v2.0 accepted, Fortran order, big-endian, truncation refused */
    static const struct {
        const char *hdr;
        int ver;
        size_t data;
        kn_status want;
        const char *msg;
    } cases[] = {
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 2, 12, KN_OK, NULL},
        {"{'descr': '<i4', 'fortran_order': True, 'shape': (3,), }", 1, 12, KN_EUNSUPPORTED,
         "Fortran"},
        {"{'descr': '>i4', 'fortran_order': False, 'shape': (3,), }", 1, 12, KN_EUNSUPPORTED,
         "dtype"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", 1, 8, KN_EINVAL, "needs 12"},
        {"{'descr': '<U4', 'fortran_order': False, 'shape': (3,), }", 1, 48, KN_EUNSUPPORTED,
         "dtype"},
        {"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 1, 0, KN_EINVAL, "shape"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        unsigned char buf[256] = "\x93NUMPY";
        size_t hl = strlen(cases[i].hdr), off = cases[i].ver == 1 ? 10 : 12;
        buf[6] = (unsigned char)cases[i].ver;
        buf[8] = (unsigned char)hl;
        memcpy(buf + off, cases[i].hdr, hl);
        kn_ctx_init(&cx, NULL);
        kn_tensor *t = NULL;
        CHECK(kn_npy_decode(&cx, a, buf, off + hl + cases[i].data, &t) == cases[i].want);
        if (cases[i].msg) CHECK(strstr(cx.msg, cases[i].msg) != NULL);
    }
    kn_ctx_init(&cx, NULL);
    CHECK(kn_npy_decode(&cx, a, "\x93NUMPY\x01", 7, &r) == KN_EINVAL);
    kn_ctx_init(&cx, NULL);
    snprintf(path, sizeof path, "%s/missing.npy", tmpdir);
    CHECK(kn_tensorfile_read(&cx, a, path, KN_KIND_TENSOR, &r) == KN_EIO);
    kn_arena_destroy(a);
}

int main(void) {
    char tmpl[] = "/tmp/kiln-unit-XXXXXX";
    tmpdir = mkdtemp(tmpl);
    if (!tmpdir) return 1;
    test_half();
    test_float8();
    test_convert();
    test_broadcast();
    test_arena_release();
    test_arena_detach();
    test_big_alloc();
    test_npy();
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd)) return 1;
    return TEST_DONE();
}
