#!/usr/bin/python3
"""The float matrix tile's loop alone, hand-written in x86-64 AVX-512 assembly, to know what
the loop kiln emits (passes/tile.c, mm_tile) could reach on this machine without the rest of
a kernel around it (docs/benchmarks.md "The host's caches, the matrix tile's loop").

A tile of ROWS x VECS vectors of 16 floats accumulates, per step k, the broadcast A[r][k]
of each row times VECS vectors of a packed B ([k][VECS * 16], one stream): kiln's form.
Variants: --steps N steps an iteration (1, 2, 4); --embedded broadcasts folded into each
FMA (`{1to16}`, no broadcast register); --packed-a A packed per tile as [k][ROWS].

  alone:   the tile over kc steps of one B (kc x VECS x 64 bytes: in L1 up to kc ~ 128 at
           4 vectors), the rows lda floats apart, repeated; best of 5, CPU time
  product: an M x K x N product in kiln's order (blocks of columns outer, tiles of rows
           inner, each tile's sums copied to y); best and mean of 10, CPU time
           (--packed-a packs A inside the timing)

usage: tile_loop.py ROWS VECS [--steps N] [--embedded] [--packed-a]
                    [--alone KC LDA] [--product M K N]
Needs gcc and an AVX-512 CPU; ROWS x VECS + VECS + 1 <= 32 registers. Compare with
bench/peak.c measured beside it."""
import argparse
import os
import subprocess
import sys
import tempfile

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
void kern(const float *a, long lda, const float *b, long kc, float *c);
static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(int argc, char **argv) {
    int R = atoi(argv[1]), V = atoi(argv[2]), packed = atoi(argv[3]), kb = V * 16;
    float c[32 * 64];
    if (!strcmp(argv[4], "alone")) {
        long kc = atol(argv[5]), lda = atol(argv[6]);
        float *a = aligned_alloc(64, (size_t)(R * lda + 64) * 4);
        float *b = aligned_alloc(64, (size_t)kc * kb * 4 + 64);
        for (long i = 0; i < R * lda; i++) a[i] = 1e-3f;
        for (long i = 0; i < kc * kb; i++) b[i] = 1e-3f;
        long it = (long)(4e9 / (kc * R * kb * 2.0));
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            double t = cpu();
            for (long i = 0; i < it; i++) kern(a, packed ? R : lda, b, kc, c);
            t = cpu() - t;
            if (t < best) best = t;
        }
        printf("%dx%d alone kc %ld: %.1f GFLOP/s\n", R, V, kc, it * kc * R * kb * 2.0 / best / 1e9);
        return 0;
    }
    long M = atol(argv[5]), K = atol(argv[6]), N = atol(argv[7]), nt = M / R, nb = N / kb;
    float *a = aligned_alloc(64, (size_t)(M * K + 64) * 4), *ap = aligned_alloc(64, (size_t)(M * K + 64) * 4);
    float *b = aligned_alloc(64, (size_t)K * N * 4 + 64), *y = aligned_alloc(64, (size_t)M * N * 4 + 64);
    for (long i = 0; i < M * K; i++) a[i] = 1e-3f * (i % 13);
    for (long i = 0; i < K * N; i++) b[i] = 1e-3f;
    memset(y, 0, (size_t)M * N * 4);
    memset(ap, 0, (size_t)M * K * 4);
    double best = 1e30, sum = 0;
    for (int rep = 0; rep < 12; rep++) {
        double t = cpu();
        if (packed)
            for (long ti = 0; ti < nt; ti++)
                for (long k = 0; k < K; k++)
                    for (int r = 0; r < R; r++) ap[ti * R * K + k * R + r] = a[(ti * R + r) * K + k];
        for (long jb = 0; jb < nb; jb++)
            for (long ti = 0; ti < nt; ti++) {
                kern(packed ? ap + ti * R * K : a + ti * R * K, K, b + jb * K * kb, K, c);
                for (int r = 0; r < R; r++) memcpy(y + (ti * R + r) * N + jb * kb, c + r * kb, kb * 4);
            }
        t = cpu() - t;
        if (rep >= 2) sum += t;
        if (t < best) best = t;
    }
    double fl = nt * R * nb * kb * K * 2.0;
    printf("%dx%d product %ldx%ldx%ld: best %.1f, mean %.1f GFLOP/s\n", R, V, nt * R, K, nb * kb, fl / best / 1e9,
           fl / (sum / 10) / 1e9);
    return 0;
}
"""


def kernel(R, V, steps, embedded, packed):
    """kern(a: rdi, lda floats: rsi, b: rdx, kc: rcx, c: r8), the rows of A from five bases
    three rows apart (rdi, r10, r11, r12, rbx) plus 0, 1 or 2 times lda * 4 (r9)."""
    L = [".text", ".globl kern", ".type kern,@function", "kern:", " push %rbx", " push %r12",
         " lea (,%rsi,4), %r9"]
    for dst, src in (("%r10", "%rdi"), ("%r11", "%r10"), ("%r12", "%r11"), ("%rbx", "%r12")):
        L += [f" lea ({src},%r9,2), {dst}", f" add %r9, {dst}"]
    acc = [[r * V + v for v in range(V)] for r in range(R)]
    L += [f" vxorps %zmm{x}, %zmm{x}, %zmm{x}" for row in acc for x in row]

    def arow(r, u):
        if packed:
            return f"{(u * R + r) * 4}(%rdi)"
        base = ("%rdi", "%r10", "%r11", "%r12", "%rbx")[r // 3]
        return f"{u * 4}({base}" + ("", ",%r9,1", ",%r9,2")[r % 3] + ")"

    L += [" mov %rcx, %rax", f" shr ${ {1: 0, 2: 1, 4: 2}[steps]}, %rax", "1:"]
    for u in range(steps):
        L += [f" vmovaps {(u * V + v) * 64}(%rdx), %zmm{R * V + v}" for v in range(V)]
        for r in range(R):
            if embedded:
                L += [f" vfmadd231ps {arow(r, u)}{{1to16}}, %zmm{R * V + v}, %zmm{acc[r][v]}"
                      for v in range(V)]
            else:
                L.append(f" vbroadcastss {arow(r, u)}, %zmm31")
                L += [f" vfmadd231ps %zmm{R * V + v}, %zmm31, %zmm{acc[r][v]}" for v in range(V)]
    L.append(f" add ${steps * V * 64}, %rdx")
    L.append(f" add ${steps * 4 * (R if packed else 1)}, %rdi")
    L += [f" add ${steps * 4}, {b}" for b in ("%r10", "%r11", "%r12", "%rbx")]
    L += [" dec %rax", " jnz 1b"]
    L += [f" vmovups %zmm{acc[r][v]}, {(r * V + v) * 64}(%r8)" for r in range(R) for v in range(V)]
    L += [" pop %r12", " pop %rbx", " vzeroupper", " ret", '.section .note.GNU-stack,"",@progbits']
    return "\n".join(L) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("rows", type=int)
    p.add_argument("vecs", type=int)
    p.add_argument("--steps", type=int, default=2, choices=(1, 2, 4))
    p.add_argument("--embedded", action="store_true")
    p.add_argument("--packed-a", action="store_true")
    p.add_argument("--alone", nargs=2, type=int, metavar=("KC", "LDA"))
    p.add_argument("--product", nargs=3, type=int, metavar=("M", "K", "N"))
    o = p.parse_args()
    if o.rows * o.vecs + o.vecs + (0 if o.embedded else 1) > 32 or o.rows > 15:
        sys.exit("tile_loop.py: the tile needs more than 32 vector registers (or 15 rows)")
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "k.s"), "w") as f:
            f.write(kernel(o.rows, o.vecs, o.steps, o.embedded, o.packed_a))
        with open(os.path.join(d, "d.c"), "w") as f:
            f.write(DRIVER)
        exe = os.path.join(d, "t")
        subprocess.run(["gcc", "-O2", "-o", exe, os.path.join(d, "d.c"), os.path.join(d, "k.s")],
                       check=True)
        base = [exe, str(o.rows), str(o.vecs), "1" if o.packed_a else "0"]
        if o.alone or not o.product:
            kc, lda = o.alone or (128, 1024)
            subprocess.run(base + ["alone", str(kc), str(lda)], check=True)
        if o.product:
            subprocess.run(base + ["product"] + [str(x) for x in o.product], check=True)


if __name__ == "__main__":
    main()
