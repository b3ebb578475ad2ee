/* quant_div_check.c: exhaustive check of passes/vmath.c kn_vmath_div_const's division,
 * q0 = v r, then twice e = fma(-q, s, v), q = fma(e, r, q), with r = RN(1/s): for the
 * scale s given, every positive float32 v with v / s in [2^-3, 2^22] (about 2.1e8 of
 * them; negative v mirror them exactly), q compared bit for bit with the float32 division
 * v / s. Below 2^-3 the quotient rounds to the integer 0 either way, above 2^22 the caller
 * clamps. Prints the count of differences (0 expected).
 *
 *   gcc -O2 -mfma bench/quant_div_check.c -o /tmp/qdc -lm && /tmp/qdc 0.0137
 *
 * docs/firmware.md, "The input quantization in VCVTR and Helium vectors": 0 differences
 * for 0.0137, 3.7, 1/3 and 0.1 (x86-64 with FMA; fmaf is exact everywhere). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s SCALE\n", argv[0]);
        return 2;
    }
    float s = strtof(argv[1], NULL);
    volatile float one = 1.0f; /* a float32 division, not folded wider */
    float r = one / s, hi = ldexpf(s, 22), lo = ldexpf(s, -3);
    uint32_t a, z;
    memcpy(&a, &lo, 4);
    memcpy(&z, &hi, 4);
    long bad = 0, n = 0;
    for (uint32_t u = a; u <= z; u++) {
        float v, q, w;
        memcpy(&v, &u, 4);
        q = v * r;
        for (int i = 0; i < 2; i++) q = fmaf(fmaf(-q, s, v), r, q);
        w = v / s;
        n++;
        if (memcmp(&q, &w, 4)) {
            if (bad < 3) printf("v %a: %a, the division %a\n", v, q, w);
            bad++;
        }
    }
    printf("s %a: %ld floats, %ld differ\n", s, n, bad);
    return bad != 0;
}
