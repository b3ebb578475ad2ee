/* Fixed-point requantization (ir/requant.h, docs/quantization.md): kn_qmul_make and
 * kn_qmul_apply against values derived by hand (ties half to even, the mantissa carry,
 * the edges of the multiplier's range, accumulator saturation) and against a table
 * computed by Python's exact integers and fractions (Fraction rounds half to even) from
 * the documented definition, for multipliers and accumulators drawn at random. */
#include "ir/requant.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct {
    double m;
    int32_t mult, shift;
} mcase;

typedef struct {
    double m;
    int64_t acc, want;
} acase;

static const mcase mcases[] = {
    /* by hand: m = f * 2^e, mult = round(f * 2^31), shift = 31 - e */
    {0.5, INT32_C(1) << 30, 31},
    {1.0, INT32_C(1) << 30, 30},
    {0.75, 3 << 29, 31},
    {1.0 / 3, 1431655765, 32},       /* 2/3 * 2^31 = 1431655765.33 */
    {0x1.fffffffffp-1, 1 << 30, 30}, /* mantissa rounds up to 2^31: carry */
    {0x1p29, INT32_C(1) << 30, 1},   /* 2^29: exact, the largest kept */
    {0x1p30, INT32_C(1) << 30, 1},   /* >= 2^30: stored as 2^29 (saturates anyway) */
    {1e30, INT32_C(1) << 30, 1},
    {0x1p-32, INT32_C(1) << 30, 62}, /* the smallest kept */
    {0x1p-33, 0, 31},                /* every |acc * m| < 1/2 */
    {0.0, 0, 31},
    {-1.0, 0, 31},
    {NAN, 0, 31},
    /* Python, random */
    {0x1.f1691c585039bp-1, 2086291222, 31},
    {0x1.cf6ad7f29d024p-2, 1943713277, 32},
    {0x1.f3eb2754e2beap+0, 2096810453, 30},
    {0x1.bd114a6b3428ap-3, 1866748571, 33},
    {0x1.9b8efe46c0ab5p+0, 1726201746, 30},
    {0x1.18d9c84366b68p+0, 1177973265, 30},
    {0x1.1db208fa38976p-38, 0, 31},
    {0x1.6deceb8266543p-11, 1534802657, 41},
    {0x1.de06ce9ac3552p-10, 2004988839, 40},
    {0x1.7b382e45ce3dfp-41, 0, 31},
};

static const acase acases[] = {
    /* by hand: ties round half to even, both signs */
    {0.5, 1, 0},
    {0.5, 3, 2},
    {0.5, 5, 2},
    {0.5, -1, 0},
    {0.5, -3, -2},
    {0.5, -5, -2},
    {3.0 / 64, 32, 2}, /* 1.5 */
    {3.0 / 64, 96, 4}, /* 4.5 */
    {3.0 / 64, -32, -2},
    {3.0 / 64, -96, -4},
    {3.0 / 64, 33, 2}, /* 1.546875 */
    {1.0 / 3, 3, 1},   /* 3 * 1431655765 / 2^32 = 0.99999999977 */
    {1.0 / 3, -3, -1},
    {1.0, 123456, 123456},
    {0.5, INT64_C(1) << 40, 1073741824},     /* saturated to 2^31 - 1, then 2^30 - 0.5 -> even */
    {0.5, -(INT64_C(1) << 40), -1073741824}, /* -2^31 * 0.5 */
    {0x1p-33, 2147483647, 0},
    {0x1p-32, 2147483647, 0},    /* 0.49999999977 */
    {0x1p-32, -2147483648LL, 0}, /* -0.5: a tie, to even */
    {0x1p30, 1, 536870912},
    {0x1p30, -1, -536870912},
    /* Python, random */
    {0x1.f1691c585039bp-1, 48230, 46856},
    {0x1.f1691c585039bp-1, 1922895273, 1868102480},
    {0x1.f1691c585039bp-1, 3987, 3873},
    {0x1.f1691c585039bp-1, -1197944432, -1163809073},
    {0x1.cf6ad7f29d024p-2, -65090, -29457},
    {0x1.cf6ad7f29d024p-2, -1371269749, -620576371},
    {0x1.cf6ad7f29d024p-2, 67487, 30542},
    {0x1.cf6ad7f29d024p-2, 911008802, 412282512},
    {0x1.f3eb2754e2beap+0, 62269, 121599},
    {0x1.f3eb2754e2beap+0, -798231825, -1558792623},
    {0x1.f3eb2754e2beap+0, 18799, 36711},
    {0x1.f3eb2754e2beap+0, -34877, -68108},
    {0x1.bd114a6b3428ap-3, 83237, 18089},
    {0x1.bd114a6b3428ap-3, -78543, -17069},
    {0x1.bd114a6b3428ap-3, 37677, 8188},
    {0x1.bd114a6b3428ap-3, -9960, -2164},
    {0x1.9b8efe46c0ab5p+0, -24519, -39418},
    {0x1.9b8efe46c0ab5p+0, -80811, -129916},
    {0x1.9b8efe46c0ab5p+0, -351659800, -565346108},
    {0x1.9b8efe46c0ab5p+0, -60159, -96715},
    {0x1.18d9c84366b68p+0, 10545, 11569},
    {0x1.18d9c84366b68p+0, 722481616, 792615142},
    {0x1.18d9c84366b68p+0, 50215, 55090},
    {0x1.18d9c84366b68p+0, -17753, -19476},
    {0x1.1db208fa38976p-38, -8203, 0},
    {0x1.1db208fa38976p-38, 52016, 0},
    {0x1.1db208fa38976p-38, -81975, 0},
    {0x1.1db208fa38976p-38, -29238, 0},
    {0x1.6deceb8266543p-11, 74103, 52},
    {0x1.6deceb8266543p-11, -233471120, -162951},
    {0x1.6deceb8266543p-11, 75283, 53},
    {0x1.6deceb8266543p-11, 21030, 15},
    {0x1.de06ce9ac3552p-10, 60148, 110},
    {0x1.de06ce9ac3552p-10, -1894276352, -3454264},
    {0x1.de06ce9ac3552p-10, -66095, -121},
    {0x1.de06ce9ac3552p-10, 4306, 8},
    {0x1.7b382e45ce3dfp-41, 30156, 0},
    {0x1.7b382e45ce3dfp-41, -218238462, 0},
    {0x1.7b382e45ce3dfp-41, -64106, 0},
    {0x1.7b382e45ce3dfp-41, 44236, 0},
};

/* kn_qadd (the fixed-point QLinearAdd of --quantize): the multipliers and shift derived
 * by hand from the definition (the largest shift in [1, 30] keeping both below 2^20),
 * and y = floor(((a - az) ma + (b - bz) mb) / 2^shift + 1/2) + cz for chosen a, b. */
typedef struct {
    double as, bs, cs;
    int64_t az, bz, cz, a, b;
    int32_t ma, mb, shift;
    int64_t want;
} qacase;

static const qacase qacases[] = {
    /* 0.5 a + 0.25 b: shift 20 (0.5 * 2^21 = 2^20 is too big) */
    {0.5, 0.25, 1, 0, 0, 0, 3, 2, 1 << 19, 1 << 18, 20, 2},        /* 2.0 */
    {0.5, 0.25, 1, 0, 0, 0, 1, 0, 1 << 19, 1 << 18, 20, 1},        /* 0.5: half up */
    {0.5, 0.25, 1, 0, 0, 0, -1, 0, 1 << 19, 1 << 18, 20, 0},       /* -0.5: half up */
    {0.5, 0.25, 1, 0, 0, 0, -3, 0, 1 << 19, 1 << 18, 20, -1},      /* -1.5 */
    {0.5, 0.25, 1, 0, 0, 0, 0, 1, 1 << 19, 1 << 18, 20, 0},        /* 0.25 */
    {0.5, 0.25, 1, 0, 0, 0, 0, 3, 1 << 19, 1 << 18, 20, 1},        /* 0.75 */
    {0.5, 0.25, 1, 10, -5, 7, 13, -3, 1 << 19, 1 << 18, 20, 9},    /* zero points: 2 + 7 */
    {1.0, 1.0, 4.0, 0, 0, 0, 255, 255, 1 << 19, 1 << 19, 21, 128}, /* 127.5: half up */
    /* 255 a + b: 255 * 2^12 = 1044480 < 2^20, 255 * 2^13 is not */
    {255, 1, 1, 0, 0, 0, 1, 0, 1044480, 4096, 12, 255},
    {255, 1, 1, 0, 0, 0, 0, 3, 1044480, 4096, 12, 3},
    /* a multiplier of 2^25: shift 1, kept below 2^20 */
    {0x1p25, 1, 1, 0, 0, 0, 0, 1, (1 << 20) - 1, 2, 1, 1},
    /* 2^-40: 2^-10 at shift 30 rounds to 0, so y = cz */
    {0x1p-40, 0x1p-40, 1, 0, 0, 5, 255, 255, 0, 0, 30, 5},
    /* cs = 0: not finite, y = cz */
    {1, 1, 0, 0, 0, 3, 100, 100, 0, 0, 1, 3},
};

int main(void) {
    for (size_t i = 0; i < sizeof qacases / sizeof *qacases; i++) {
        const qacase *c = &qacases[i];
        kn_qadd q = kn_qadd_make(c->as, c->bs, c->cs, c->az, c->bz);
        int64_t y = kn_qadd_apply(q, c->a, c->b, c->cz);
        if (q.ma != c->ma || q.mb != c->mb || q.shift != c->shift || y != c->want)
            fprintf(stderr, "  qadd case %zu: ma %d mb %d shift %d y %lld\n", i, q.ma, q.mb,
                    q.shift, (long long)y);
        CHECK(q.ma == c->ma && q.mb == c->mb && q.shift == c->shift && y == c->want);
    }
    /* random float32 scales and 8-bit zero points: every partial sum of the i32 form
     * (a * ma + b * mb + round, the lowering's) below 2^31 for all 8-bit a and b, and y
     * the real value (a - az) as / cs + (b - bz) bs / cs rounded half up, away from
     * rounding boundaries (each multiplier off by at most 1/2: x by at most
     * (|a - az| + |b - bz|) / 2^(shift + 1)) */
    uint64_t qs = 12345;
    int qbad = 0, near = 0, total = 0;
    for (int it = 0; it < 2000; it++) {
        double sc[3];
        for (int k = 0; k < 3; k++) {
            qs = qs * 6364136223846793005u + 1442695040888963407u;
            sc[k] = (float)ldexp(1.0 + (double)(qs >> 40) / 16777216.0, (int)((qs >> 8) % 12) - 8);
        }
        qs = qs * 6364136223846793005u + 1442695040888963407u;
        int64_t az = (int64_t)(qs >> 16) % 256, bz = (int64_t)(qs >> 32) % 256 - 128;
        kn_qadd q = kn_qadd_make(sc[0], sc[1], sc[2], az, bz);
        for (int64_t a = 0; a < 256; a += 5)
            for (int64_t b = -128; b < 128; b += 3) {
                int64_t v = a * q.ma + b * q.mb + q.round;
                if (v >= INT64_C(1) << 31 || v < -(INT64_C(1) << 31)) qbad++;
                double x = ((double)(a - az) * sc[0] + (double)(b - bz) * sc[1]) / sc[2];
                double f = x - floor(x);
                total++;
                if (fabs(x) > 600) continue; /* saturated in 8 bits anyway */
                /* each multiplier within 1/2 of its exact value */
                double tol = (double)(llabs(a - az) + llabs(b - bz)) / ldexp(1, q.shift + 1);
                if (fabs(f - 0.5) <= tol + 1e-9) {
                    near++;
                    continue;
                }
                if (kn_qadd_apply(q, a, b, 0) != (int64_t)floor(x + 0.5) && qbad++ < 5)
                    fprintf(stderr, "  qadd: scales %g %g %g a %lld b %lld: %lld, want %g\n", sc[0],
                            sc[1], sc[2], (long long)a, (long long)b,
                            (long long)kn_qadd_apply(q, a, b, 0), floor(x + 0.5));
            }
        for (int64_t a = -128; a < 256; a += 383) /* the corners of u8 and i8 */
            for (int64_t b = -128; b < 256; b += 383) {
                int64_t v = a * q.ma + b * q.mb + q.round;
                if (v >= INT64_C(1) << 31 || v < -(INT64_C(1) << 31)) qbad++;
            }
    }
    CHECK(qbad == 0);
    CHECK(near < total / 100);

    for (size_t i = 0; i < sizeof mcases / sizeof *mcases; i++) {
        kn_qmul q = kn_qmul_make(mcases[i].m);
        CHECK(q.mult == mcases[i].mult);
        CHECK(q.shift == mcases[i].shift);
        if (q.mult != mcases[i].mult || q.shift != mcases[i].shift)
            fprintf(stderr, "  case %zu: m %a gives %d, %d\n", i, mcases[i].m, q.mult, q.shift);
    }
    for (size_t i = 0; i < sizeof acases / sizeof *acases; i++) {
        int64_t got = kn_qmul_apply(acases[i].acc, kn_qmul_make(acases[i].m));
        CHECK(got == acases[i].want);
        if (got != acases[i].want)
            fprintf(stderr, "  case %zu: m %a acc %lld gives %lld\n", i, acases[i].m,
                    (long long)acases[i].acc, (long long)got);
    }
    /* the 32-bit form equals the exact one wherever it applies: every shift it takes,
     * multipliers and accumulators at random and at their edges (ties included: acc a
     * power of two times an odd multiple of 2^(shift-1) / mult) */
    uint64_t seed = 0x9e3779b97f4a7c15u;
    int bad = 0;
    for (int32_t sh = 30; sh <= 63; sh++)
        for (int i = 0; i < 20000; i++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            uint32_t r1 = (uint32_t)(seed >> 32), r2 = (uint32_t)seed;
            kn_qmul q = {(int32_t)((INT32_C(1) << 30) | (r1 & 0x3fffffff)), sh};
            if (i == 0) q.mult = INT32_C(1) << 30;
            if (i == 1) q.mult = INT32_MAX;
            int32_t acc = i < 4 ? (i & 1 ? INT32_MIN : INT32_MAX) : (int32_t)r2;
            if (i % 7 == 5) acc = (int32_t)r2 >> (r1 % 31); /* small magnitudes */
            if (i % 7 == 6) { /* exact ties: mult 2^30, acc = odd * 2^(shift-31) */
                q.mult = INT32_C(1) << 30;
                int e = sh - 31;
                acc = e >= 0 && e < 31
                          ? (int32_t)((((int64_t)(r2 % 4096) * 2 + 1) << e) * (r1 & 1 ? -1 : 1))
                          : 0;
            }
            CHECK(kn_qmul_32bit(q) == (sh >= 33 && sh <= 62));
            if (!kn_qmul_32bit(q)) continue;
            int64_t want = kn_qmul_apply(acc, q), got = kn_qmul_apply32(acc, q);
            if (got != want && bad++ < 5)
                fprintf(stderr, "  32-bit: mult %d shift %d acc %d gives %lld, want %lld\n", q.mult,
                        sh, acc, (long long)got, (long long)want);
        }
    CHECK(bad == 0);
    /* the high-word form (kn_qmul_hi32): hand-derived edges. M = 2^30 * 2^-40 = 2^-10:
     * acc 512 is the tie 0.5 (half to even: 0, half up: 1), so a bound of 512 is
     * refused and 511 taken; mult 0 gives zp; a zero point that overflows int32 once
     * scaled by 2^t (t = 30) is refused */
    {
        int32_t t = 0, rnd = 0;
        CHECK(!kn_qmul_hi32((kn_qmul){INT32_C(1) << 30, 40}, 512, 0, &t, &rnd));
        CHECK(kn_qmul_hi32((kn_qmul){INT32_C(1) << 30, 40}, 511, 0, &t, &rnd));
        CHECK(t == 8 && rnd == 128);
        CHECK(kn_qmul_apply_hi32(511, INT32_C(1) << 30, rnd, t) == 0);
        CHECK(kn_qmul_apply_hi32(-511, INT32_C(1) << 30, rnd, t) == 0);
        CHECK(kn_qmul_apply_hi32(384, INT32_C(1) << 30, rnd, t) == 0);  /* 0.375 */
        CHECK(kn_qmul_apply_hi32(-385, INT32_C(1) << 30, rnd, t) == 0); /* -0.376 */
        CHECK(kn_qmul_hi32((kn_qmul){0, 31}, 1000, -128, &t, &rnd));
        CHECK(kn_qmul_apply_hi32(12345, 0, rnd, t) == -128);
        CHECK(!kn_qmul_hi32((kn_qmul){(INT32_C(1) << 30) + 1, 62}, 1000, 255, &t, &rnd));
        CHECK(kn_qmul_hi32((kn_qmul){(INT32_C(1) << 30) + 1, 62}, 1000, 0, &t, &rnd));
        CHECK(!kn_qmul_hi32((kn_qmul){(INT32_C(1) << 30) + 1, 32}, 1000, 0, &t, &rnd));
        /* odd multiplier, shift 33 (t = 1): ties need acc a multiple of 2^32 */
        CHECK(kn_qmul_hi32((kn_qmul){INT32_MAX, 33}, INT32_MAX, 0, &t, &rnd));
    }
    /* and equals the exact one plus zp wherever it is taken: random multipliers (with
     * trailing zero bits too), shifts, bounds and zero points; accumulators at random,
     * at the bound and near ties (acc * mult / 2^shift within 1 of k + 1/2) */
    int taken = 0;
    bad = 0;
    for (int i = 0; i < 400000; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        uint32_t r1 = (uint32_t)(seed >> 32), r2 = (uint32_t)seed;
        int tz = r1 % 4 == 0 ? (int)(r2 % 31) : 0;
        int32_t mult = (int32_t)(((INT32_C(1) << 30) | (r1 & 0x3fffffff)) >> tz << tz);
        if (mult < (INT32_C(1) << 30)) mult = INT32_C(1) << 30;
        kn_qmul q = {mult, 33 + (int32_t)(r2 % 30)};
        int64_t bound = (int64_t)(r1 >> (r2 % 32)) & INT32_MAX;
        int32_t zp = (int32_t)((r2 >> 8) % 256) - (r2 & 1 ? 128 : 0);
        int32_t t = 0, rnd = 0;
        if (!kn_qmul_hi32(q, bound, zp, &t, &rnd)) continue;
        taken++;
        for (int k = 0; k < 8; k++) {
            seed = seed * 6364136223846793005u + 1442695040888963407u;
            int64_t acc = bound ? (int64_t)(seed >> 20) % (bound + 1) : 0;
            if (k & 1) acc = -acc;
            if (k == 0) acc = bound;
            if (k == 1) acc = -bound;
            if (k >= 6) { /* acc nearest (j + 1/2) 2^shift / mult, j from acc */
                double j = floor((double)acc * mult / ldexp(1, q.shift));
                acc = llround((j + 0.5) * ldexp(1, q.shift) / mult) + (k == 7 ? -1 : 0);
                if (acc > bound || acc < -bound) acc = 0;
            }
            int64_t want = kn_qmul_apply(acc, q) + zp;
            int64_t got = kn_qmul_apply_hi32((int32_t)acc, q.mult, rnd, t);
            if (got != want && bad++ < 5)
                fprintf(stderr, "  hi32: mult %d shift %d zp %d acc %lld gives %lld, want %lld\n",
                        q.mult, q.shift, zp, (long long)acc, (long long)got, (long long)want);
        }
    }
    CHECK(bad == 0);
    CHECK(taken > 100000);
    /* the scales' multiplier is the double product and quotient of the float32 scales */
    kn_qmul a = kn_qmul_scales(0.125f, 0.28125f, 0.75f), b = kn_qmul_make(3.0 / 64);
    CHECK(a.mult == b.mult && a.shift == b.shift);
    return TEST_DONE();
}
