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

  --kiln:  the loop as kiln emits it (passes/tile.c's mm_tile through LLVM): A's rows at
           displacements lda * 4 apart from one base plus an index counting up to zero, two
           pointer adds an iteration, the sums stored straight to y (the rows form keeps
           five row bases and copies each tile's sums to y through a scratch)

Controlled variants of --product, to see which operand's movement costs (docs/benchmarks.md
"Why the product loses against the loop"): --a-tiles N the tiles read A's first N tiles
of rows over and over (N x ROWS x K floats, in L2 when small; 0: every tile its own rows);
--b-panels N the blocks of columns read the first N packed panels of B, cycled (0: each its
own); --no-store the sums go to a scratch in L1, not y; --groups NG MC the GotoBLAS order
of passes/tile.c's mm_groups (NG blocks of columns, within them blocks of MC rows, each
over every block of the group); --prefetch-a (with --kiln) each tile prefetches the next
tile's rows of A into L2 (prefetcht1, a line an iteration), computing on its own;
--serpentine the odd blocks of columns run their tiles of rows last to first, so a block
starts on the rows of A the block before ended on (still in L2).

--form F,... (with --kiln) varies the loop's instruction mix (docs/benchmarks.md "The matrix
tile's instruction mix"): folda (A's broadcasts folded into the FMAs, {1to16}), foldb (B's
vectors folded into the FMAs), alt (two broadcast registers in turn), base (A and B from
advancing bases, no index register), noload (the FMAs alone), pfaD (each row's A prefetched
D lines ahead; with --steps 16 once a line); --steps 8 and 16 for longer iterations.

usage: tile_loop.py ROWS VECS [--steps N] [--embedded] [--packed-a] [--kiln]
                    [--alone KC LDA] [--product M K N] [--a-tiles N] [--b-panels N]
                    [--no-store] [--groups NG MC] [--prefetch-a] [--serpentine]
                    [--rounds N] [--form F,...]
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
void kernk(const float *a, const float *b, long kc, float *y, long ldy, const float *pf);
void kernka(const float *a, const float *b, long kc, float *y, long ldy, const float *pf);
static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}
int main(int argc, char **argv) {
    int R = atoi(argv[1]), V = atoi(argv[2]), packed = atoi(argv[3]), kiln = atoi(argv[4]);
    int kb = V * 16;
    float c[32 * 64] __attribute__((aligned(64)));
    if (!strcmp(argv[5], "alone")) {
        long kc = atol(argv[6]), lda = atol(argv[7]);
        float *a = aligned_alloc(64, (size_t)(R * lda + 64) * 4);
        float *b = aligned_alloc(64, (size_t)kc * kb * 4 + 64);
        for (long i = 0; i < R * lda; i++) a[i] = 1e-3f;
        for (long i = 0; i < kc * kb; i++) b[i] = 1e-3f;
        long it = (long)(4e9 / (kc * R * kb * 2.0));
        double best = 1e30;
        for (int rep = 0; rep < 5; rep++) {
            double t = cpu();
            for (long i = 0; i < it; i++)
                if (kiln)
                    kernka(a, b, kc, c, kb, a);
                else
                    kern(a, packed ? R : lda, b, kc, c);
            t = cpu() - t;
            if (t < best) best = t;
        }
        printf("%dx%d alone kc %ld: %.1f GFLOP/s\n", R, V, kc, it * kc * R * kb * 2.0 / best / 1e9);
        return 0;
    }
    long M = atol(argv[6]), K = atol(argv[7]), N = atol(argv[8]), nt = M / R, nb = N / kb;
    long atiles = atol(argv[9]), bpan = atol(argv[10]), nostore = atol(argv[11]);
    long ng = atol(argv[12]), mt = atol(argv[13]) / R, reps = atol(argv[14]), serp = atol(argv[15]);
    if (bpan <= 0 || bpan > nb) bpan = nb;
    if (ng <= 0) ng = nb;
    if (mt <= 0) mt = nt;
    float *a = aligned_alloc(64, (size_t)(M * K + 64) * 4), *ap = aligned_alloc(64, (size_t)(M * K + 64) * 4);
    float *b = aligned_alloc(64, (size_t)K * N * 4 + 64), *y = aligned_alloc(64, (size_t)M * N * 4 + 64);
    for (long i = 0; i < M * K; i++) a[i] = 1e-3f * (i % 13);
    for (long i = 0; i < K * N; i++) b[i] = 1e-3f * (1 + i % 11);
    memset(y, 0, (size_t)M * N * 4);
    memset(ap, 0, (size_t)M * K * 4);
    double best = 1e30, sum = 0;
    for (int rep = 0; rep < reps + 2; rep++) {
        double t = cpu();
        if (packed)
            for (long ti = 0; ti < nt; ti++)
                for (long k = 0; k < K; k++)
                    for (int r = 0; r < R; r++) ap[ti * R * K + k * R + r] = a[(ti * R + r) * K + k];
        for (long g0 = 0; g0 < nb; g0 += ng)
            for (long r0 = 0; r0 < nt; r0 += mt)
                for (long jb = g0; jb < g0 + ng && jb < nb; jb++)
                    for (long t = r0; t < r0 + mt && t < nt; t++) {
                        /* serpentine: odd blocks run their tiles last to first */
                        long te = r0 + mt < nt ? r0 + mt : nt, ti = serp && jb % 2 ? te - 1 - (t - r0) : t;
                        long ta = atiles > 0 ? ti % atiles : ti;
                        const float *bp = b + jb % bpan * K * kb;
                        if (kiln) {
                            kernk(a + ta * R * K, bp, K, nostore ? c : y + ti * R * N + jb * kb,
                                  nostore ? kb : N, a + (ti + 1) % nt * R * K);
                            continue;
                        }
                        kern(packed ? ap + ta * R * K : a + ta * R * K, K, bp, K, c);
                        if (!nostore)
                            for (int r = 0; r < R; r++) memcpy(y + (ti * R + r) * N + jb * kb, c + r * kb, kb * 4);
                    }
        t = cpu() - t;
        if (rep >= 2) sum += t;
        if (t < best) best = t;
    }
    if (!nostore && atiles <= 0 && bpan == nb) { /* a few sums against a scalar product */
        for (long i = 0; i < nt * R; i += 7)
            for (long j = 0; j < nb * kb; j += 37) {
                double s = 0; /* b is [block][k][kb] */
                for (long k = 0; k < K; k++) s += (double)a[i * K + k] * b[j / kb * K * kb + k * kb + j % kb];
                if (y[i * N + j] < s * 0.9999 || y[i * N + j] > s * 1.0001) {
                    fprintf(stderr, "wrong sum at %ld, %ld: %g, not %g\n", i, j, y[i * N + j], s);
                    return 1;
                }
            }
    }
    double fl = nt * R * nb * kb * K * 2.0;
    printf("%dx%d product %ldx%ldx%ld: best %.1f, mean %.1f GFLOP/s\n", R, V, nt * R, K, nb * kb, fl / best / 1e9,
           fl / (sum / reps) / 1e9);
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

    L += [" mov %rcx, %rax", f" shr ${ {1: 0, 2: 1, 4: 2, 8: 3, 16: 4}[steps]}, %rax", "1:"]
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


def kernel_kiln(name, R, V, steps, lda, prefetch, form=()):
    """name(a: rdi, b: rsi, kc: rdx, y: rcx, ldy floats: r8, pf: r9) as kiln's loop: row r of
    A at displacement r * lda * 4 from rdi + rax, rax counting from -kc * 4 up to 0; with
    prefetch, prefetcht1 (r9) and r9 += 64 an iteration. form (--form) varies the
    instruction mix: "folda" each FMA takes its row's A from memory ({1to16}, no broadcast
    register: one load per FMA), "foldb" each FMA takes its B vector from memory (A in a
    broadcast register, B loaded once per row), "alt" the broadcasts alternate between two
    registers, "base" A and B addressed from bases that advance with no index register
    (rdi += steps * 4, rsi += steps * V * 64, cmp against the end), "noload" the FMAs on
    registers only (no A or B loaded: the bound of the tile's FMAs and the loop's branch), "pfaD"
    each row's A prefetched D lines ahead (prefetcht0) once an iteration (with 16 steps an
    iteration: once a line)."""
    base = "base" in form
    L = [".text", f".globl {name}", f".type {name},@function", f"{name}:",
         " lea (,%rdx,4), %rax", " shl $2, %r8"]
    if base:
        L += [" lea (%rdi,%rax), %r10"]  # A's end
    else:
        L += [" add %rax, %rdi", " neg %rax"]
    acc = [[r * V + v for v in range(V)] for r in range(R)]
    L += [f" vxorps %zmm{x}, %zmm{x}, %zmm{x}" for row in acc for x in row]
    if "noload" in form:
        L += [f" vxorps %zmm{x}, %zmm{x}, %zmm{x}" for x in range(R * V, 32)]
    L.append("1:")

    def aref(r, u):
        return f"{r * lda * 4 + u * 4}(%rdi)" if base else f"{r * lda * 4 + u * 4}(%rdi,%rax)"

    for u in range(steps):
        if "foldb" in form:
            for r in range(R):
                ar = 31 - (r % 2 if "alt" in form else 0)
                L.append(f" vbroadcastss {aref(r, u)}, %zmm{ar}")
                L += [f" vfmadd231ps {(u * V + v) * 64}(%rsi), %zmm{ar}, %zmm{acc[r][v]}"
                      for v in range(V)]
            continue
        if "noload" not in form:
            L += [f" vmovaps {(u * V + v) * 64}(%rsi), %zmm{R * V + v}" for v in range(V)]
        for r in range(R):
            if "folda" in form:
                L += [f" vfmadd231ps {aref(r, u)}{{1to16}}, %zmm{R * V + v}, %zmm{acc[r][v]}"
                      for v in range(V)]
                continue
            ar = 31 - ((r + u * R) % 2 if "alt" in form else 0)
            if "noload" not in form:
                L.append(f" vbroadcastss {aref(r, u)}, %zmm{ar}")
            L += [f" vfmadd231ps %zmm{R * V + v}, %zmm{ar}, %zmm{acc[r][v]}" for v in range(V)]
    if prefetch:
        L += [" prefetcht1 (%r9)", " add $64, %r9"]
    for f in form:  # "pfaD": each row's A D lines ahead, once a line (16 steps an iteration)
        if f.startswith("pfa"):
            L += [f" prefetcht0 {aref(r, 0)[:0]}{r * lda * 4 + int(f[3:]) * 64}"
                  + ("(%rdi)" if base else "(%rdi,%rax)") for r in range(R)]
    if base:
        L += [f" add ${steps * V * 64}, %rsi", f" add ${steps * 4}, %rdi", " cmp %r10, %rdi",
              " jne 1b"]
    else:
        L += [f" add ${steps * V * 64}, %rsi", f" add ${steps * 4}, %rax", " jne 1b"]
    for r in range(R):
        L += [f" vmovups %zmm{acc[r][v]}, {v * 64}(%rcx)" for v in range(V)]
        L.append(" add %r8, %rcx")
    L += [" vzeroupper", " ret", '.section .note.GNU-stack,"",@progbits']
    return "\n".join(L) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("rows", type=int)
    p.add_argument("vecs", type=int)
    p.add_argument("--steps", type=int, default=2, choices=(1, 2, 4, 8, 16))
    p.add_argument("--embedded", action="store_true")
    p.add_argument("--packed-a", action="store_true")
    p.add_argument("--alone", nargs=2, type=int, metavar=("KC", "LDA"))
    p.add_argument("--product", nargs=3, type=int, metavar=("M", "K", "N"))
    p.add_argument("--kiln", action="store_true")
    p.add_argument("--a-tiles", type=int, default=0)
    p.add_argument("--b-panels", type=int, default=0)
    p.add_argument("--no-store", action="store_true")
    p.add_argument("--groups", nargs=2, type=int, default=(0, 0), metavar=("NG", "MC"))
    p.add_argument("--prefetch-a", action="store_true")
    p.add_argument("--serpentine", action="store_true")
    p.add_argument("--rounds", type=int, default=10)
    p.add_argument("--form", default="", help="with --kiln: comma-separated folda, foldb, alt, "
                   "base, noload, pfaD (kernel_kiln)")
    o = p.parse_args()
    if o.kiln and (o.embedded or o.packed_a):
        sys.exit("tile_loop.py: --kiln takes broadcast registers (or --form folda), A by rows")
    if o.form and not o.kiln:
        sys.exit("tile_loop.py: --form needs --kiln")
    if o.prefetch_a and not o.kiln:
        sys.exit("tile_loop.py: --prefetch-a needs --kiln")
    if o.rows * o.vecs + o.vecs + (0 if o.embedded else 1) > 32 or o.rows > 15:
        sys.exit("tile_loop.py: the tile needs more than 32 vector registers (or 15 rows)")
    kc_lda = o.alone or (128, 1024)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "k.s"), "w") as f:
            f.write(kernel(o.rows, o.vecs, o.steps, o.embedded, o.packed_a))
            # kiln's form: one for the product (rows K apart), one for the loop alone
            k_prod = o.product[1] if o.product else 1024
            form = tuple(x for x in o.form.split(",") if x)
            f.write(kernel_kiln("kernk", o.rows, o.vecs, o.steps, k_prod, o.prefetch_a, form))
            f.write(kernel_kiln("kernka", o.rows, o.vecs, o.steps, kc_lda[1], False, form))
        with open(os.path.join(d, "d.c"), "w") as f:
            f.write(DRIVER)
        exe = os.path.join(d, "t")
        subprocess.run(["gcc", "-O2", "-o", exe, os.path.join(d, "d.c"), os.path.join(d, "k.s")],
                       check=True)
        base = [exe, str(o.rows), str(o.vecs), "1" if o.packed_a else "0", "1" if o.kiln else "0"]
        if o.alone or not o.product:
            subprocess.run(base + ["alone", str(kc_lda[0]), str(kc_lda[1])], check=True)
        if o.product:
            extra = [o.a_tiles, o.b_panels, int(o.no_store), o.groups[0], o.groups[1], o.rounds,
                     int(o.serpentine)]
            subprocess.run(base + ["product"] + [str(x) for x in list(o.product) + extra],
                           check=True)

if __name__ == "__main__":
    main()
