/* The example firmware: runs the keyword-spotting model kiln compiled, in float (kws.h,
 * kws.c) and in int8 (kws_int8.h, kws_int8.c: the QDQ model make_qdq.py writes), on the
 * reference input, in one arena the two share (kws_arena.h, from kiln_add_arena: they never
 * run at the same time). It prints the outputs next to the references (kws_ref.h: torch's
 * float output; kws_int8_ref.h: the integer operators' output, computed with numpy) and the
 * instructions each inference took, from the board's FPGA counter under QEMU's
 * -icount shift=0 (one instruction = one nanosecond of the board's clock). Returns 0 when
 * every float output is within 1e-5 * max |reference| and every int8 output is equal.
 * It also runs each model once more on a painted stack and checks that the stack it used is
 * at most <name>_STACK_BYTES (kws_stack.h, kws_int8_stack.h: from GCC's call graph, written
 * by kiln_add_model) plus the most any library function it calls takes, and runs kws_io (the
 * float model compiled with --arena-in-place-io) with its input and output in the arena,
 * and kws_int8_mem (the int8 model compiled with --memory) from two arena regions, the fast
 * one in a RAM bank of its own on the AN386. */
#include "kws.h"
#include "kws_arena.h"
#include "kws_int8.h"
#include "kws_int8_ref.h"
#include "kws_ref.h"
#include "kws_int8_stack.h"
#include "kws_int8_mem.h"
#include "kws_io.h"
#include "kws_stack.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static float output[kws_OUTPUT_0_SIZE];
static int8_t output_int8[kws_int8_OUTPUT_0_SIZE], output_mem[kws_int8_OUTPUT_0_SIZE];

/* kws_int8_mem's two arena regions (--memory fast=16K,slow=64K): fast in section .fast_bss
 * (the linker script puts it in the FAST bank), slow in .bss */
#define NONZERO(n) ((n) ? (n) : 1)
static unsigned char fast_arena[NONZERO(kws_int8_mem_ARENA_fast_SIZE)]
    __attribute__((aligned(kws_int8_mem_ARENA_ALIGN), section(".fast_bss")));
static unsigned char slow_arena[NONZERO(kws_int8_mem_ARENA_slow_SIZE)]
    __attribute__((aligned(kws_int8_mem_ARENA_ALIGN)));

static uint32_t counter(void) {
    return *(volatile const uint32_t *)COUNTER_ADDR;
}

/* instructions = ticks * (1e9 / COUNTER_HZ): one per nanosecond under -icount shift=0 */
static void print_count(const char *what, uint32_t ticks) {
    uint64_t instructions = (uint64_t)ticks * 1000000000u / COUNTER_HZ;
    printf("%sinstructions per inference: %llu (%lu counter ticks at %lu Hz)\n", what,
           (unsigned long long)instructions, (unsigned long)ticks, (unsigned long)COUNTER_HZ);
}

/* Stack measurement: stack_paint fills the STACK_PAINT bytes below its caller's stack
 * pointer with STACK_WORD (naked, in assembly: it has no frame of its own); after a call
 * the deepest word that changed is as deep as the callee's stack went. Nothing else runs
 * (no interrupts), so nothing else writes there. */
#define STACK_PAINT 8192u
#define STACK_WORD 0x5aa5c33cu

static inline uint32_t *stack_pointer(void) {
    uint32_t *sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

static __attribute__((naked, noinline)) void stack_paint(void) {
    __asm__ volatile("mov r0, sp\n"
                     "sub r1, r0, #8192\n" /* STACK_PAINT */
                     "movw r2, #0xc33c\n"  /* STACK_WORD */
                     "movt r2, #0x5aa5\n"
                     "1: str r2, [r1], #4\n"
                     "cmp r1, r0\n"
                     "blo 1b\n"
                     "bx lr\n");
}

/* bytes below sp (the caller's stack pointer at stack_paint()) that changed since */
static unsigned stack_used(uint32_t *sp) {
    volatile const uint32_t *p = sp - STACK_PAINT / 4;
    while (p < sp && *p == STACK_WORD) p++;
    return (unsigned)((sp - (const uint32_t *)p) * 4);
}

/* The library functions the models call (their <name>_STACK_CALLS): the most stack any of
 * them takes in one call, measured the same way. <name>_STACK_BYTES does not include them
 * (GCC's call graph of the model has no sizes for other files' functions). The soft-float
 * core (no __ARM_FP) calls libgcc's single-precision helpers. */
#ifndef __ARM_FP
float __aeabi_fadd(float, float);
float __aeabi_fmul(float, float);
float __aeabi_fdiv(float, float);
int __aeabi_fcmplt(float, float);
#endif
static volatile float lib_sink;
static __attribute__((noinline)) unsigned stack_library(void) {
    /* memcpy, memmove (the generated C's copies) and memset, short and long, aligned and
     * not: newlib's memmove takes more stack for long copies, which the models make too
     * (a depthwise channel's plane, a band of rows of a 1x1 convolution: docs/firmware.md) */
    static unsigned char src[4096 + 4], dst[4096 + 4];
    static const size_t len[] = {64, 4096, 4093}, off[] = {0, 0, 1};
    void *(*volatile copy[])(void *, const void *, size_t) = {memcpy, memmove};
    void *(*volatile fill)(void *, int, size_t) = memset;
    float (*volatile round)(float) = nearbyintf;
    uint32_t *sp = stack_pointer();
    unsigned most = 0, used;
    for (int i = 0; i < 3; i++)
        for (int f = 0; f < 3; f++) {
            stack_paint();
            if (f < 2)
                copy[f](dst + 3 * off[i], src + off[i], len[i]);
            else
                fill(dst + off[i], 0, len[i]);
            used = stack_used(sp);
            most = used > most ? used : most;
        }
    stack_paint();
    lib_sink = round(lib_sink + 2.5f);
    used = stack_used(sp);
    most = used > most ? used : most;
#ifndef __ARM_FP
    float (*volatile f2[])(float, float) = {__aeabi_fadd, __aeabi_fmul, __aeabi_fdiv};
    for (int i = 0; i < 3; i++) {
        stack_paint();
        lib_sink = f2[i](lib_sink + 1.0f, 3.0f);
        used = stack_used(sp);
        most = used > most ? used : most;
    }
    int (*volatile lt)(float, float) = __aeabi_fcmplt;
    stack_paint();
    lib_sink = (float)lt(lib_sink, 3.0f);
    used = stack_used(sp);
    most = used > most ? used : most;
#endif
    return most;
}

/* prints and checks the stack one call used against its bound plus the library's */
static int stack_check(const char *name, unsigned used, unsigned bound, unsigned library,
                       const char *calls) {
    int ok = used <= bound + library && used < STACK_PAINT;
    printf("%s: %s stack %u bytes, %s_STACK_BYTES %u + library calls %u (%s)\n",
           ok ? "PASS" : "FAIL", name, used, name, bound, library, calls);
    return ok;
}

int main(void) {
    _Static_assert(kws_INPUT_0_SIZE == sizeof kws_ref_input / sizeof *kws_ref_input,
                   "kws.onnx and kws_ref.h disagree on the input size");
    _Static_assert(kws_OUTPUT_0_SIZE == sizeof kws_ref_output / sizeof *kws_ref_output,
                   "kws.onnx and kws_ref.h disagree on the output size");
    _Static_assert(kws_int8_INPUT_0_SIZE == kws_INPUT_0_SIZE, "the int8 model's input differs");
    _Static_assert(kws_int8_OUTPUT_0_SIZE ==
                       sizeof kws_ref_output_int8 / sizeof *kws_ref_output_int8,
                   "kws_int8.onnx and kws_int8_ref.h disagree on the output size");
    printf("kiln firmware example: %s, --target %s, arena %u bytes (float %u, int8 %u), "
           "weights %u bytes (float), %u bytes (int8)\n",
           BOARD, KILN_TARGET, (unsigned)kws_arena_SIZE, (unsigned)kws_ARENA_SIZE,
           (unsigned)kws_int8_ARENA_SIZE, (unsigned)kws_WEIGHTS_SIZE,
           (unsigned)kws_int8_WEIGHTS_SIZE);

    /* float */
    uint32_t t0 = counter();
    int rc = kws_run(kws_ref_input, output, kws_arena);
    uint32_t ticks = counter() - t0;
    if (rc != 0) {
        printf("kws_run returned %d\n", rc);
        return 1;
    }
    float ref_max = 0, err = 0;
    for (int i = 0; i < kws_OUTPUT_0_SIZE; i++) {
        ref_max = fmaxf(ref_max, fabsf(kws_ref_output[i]));
        err = fmaxf(err, fabsf(output[i] - kws_ref_output[i]));
    }
    for (int i = 0; i < kws_OUTPUT_0_SIZE; i++)
        printf("output %2d % .8e  (reference % .8e)\n", i, (double)output[i],
               (double)kws_ref_output[i]);
    print_count("", ticks);
    int ok = err <= 1e-5f * ref_max;
    printf("%s: max |output - reference| = %.3e, tolerance %.3e\n", ok ? "PASS" : "FAIL",
           (double)err, (double)(1e-5f * ref_max));

    /* int8 */
    t0 = counter();
    rc = kws_int8_run(kws_ref_input, output_int8, kws_arena);
    ticks = counter() - t0;
    if (rc != 0) {
        printf("kws_int8_run returned %d\n", rc);
        return 1;
    }
    int differ = 0;
    for (int i = 0; i < kws_int8_OUTPUT_0_SIZE; i++) {
        differ += output_int8[i] != kws_ref_output_int8[i];
        printf("int8 output %2d %4d  (reference %4d)\n", i, output_int8[i], kws_ref_output_int8[i]);
    }
    print_count("int8 ", ticks);
    printf("%s: int8 outputs equal to the reference: %d of %d\n", differ ? "FAIL" : "PASS",
           kws_int8_OUTPUT_0_SIZE - differ, kws_int8_OUTPUT_0_SIZE);

    /* the float model compiled with --arena-in-place-io: the input written into the arena
     * at its offset, the output read from its own; equal to kws_run's byte for byte */
    float *io_in = (float *)(void *)(kws_arena + kws_io_INPUT_0_OFFSET);
    float *io_out = (float *)(void *)(kws_arena + kws_io_OUTPUT_0_OFFSET);
    memcpy(io_in, kws_ref_input, sizeof kws_ref_input);
    rc = kws_io_run(io_in, io_out, kws_arena);
    int io_ok = rc == 0 && !memcmp(io_out, output, sizeof output);
    printf("%s: in-place inputs and outputs (arena %u bytes, input at %u, output at %u): "
           "output %s kws_run's\n",
           io_ok ? "PASS" : "FAIL", (unsigned)kws_io_ARENA_SIZE, (unsigned)kws_io_INPUT_0_OFFSET,
           (unsigned)kws_io_OUTPUT_0_OFFSET, io_ok ? "equal to" : "differs from");

    /* the int8 model with its arena in two regions (kws_int8_mem): the same bytes */
    _Static_assert(CMAKE_FAST_SIZE == kws_int8_mem_ARENA_fast_SIZE &&
                       CMAKE_SLOW_SIZE == kws_int8_mem_ARENA_slow_SIZE,
                   "kiln_add_model's region sizes differ from the header's");
    t0 = counter();
    rc = kws_int8_mem_run(kws_ref_input, output_mem, fast_arena, slow_arena);
    ticks = counter() - t0;
    int mem_ok = rc == 0 && !memcmp(output_mem, output_int8, sizeof output_int8);
    printf("%s: two arena regions: fast %u bytes at 0x%08lx, slow %u bytes at 0x%08lx: int8 "
           "output %s kws_int8_run's\n",
           mem_ok ? "PASS" : "FAIL", (unsigned)kws_int8_mem_ARENA_fast_SIZE,
           (unsigned long)(uintptr_t)fast_arena, (unsigned)kws_int8_mem_ARENA_slow_SIZE,
           (unsigned long)(uintptr_t)slow_arena, mem_ok ? "equal to" : "differs from");
    print_count("two-region int8 ", ticks);

    /* stack: each model once more on a painted stack */
    unsigned library = stack_library();
    uint32_t *sp = stack_pointer();
    stack_paint();
    rc = kws_run(kws_ref_input, output, kws_arena);
    unsigned used = stack_used(sp);
    int stack_ok = rc == 0 && stack_check("kws", used, kws_STACK_BYTES, library, kws_STACK_CALLS);
    stack_paint();
    rc = kws_int8_run(kws_ref_input, output_int8, kws_arena);
    used = stack_used(sp);
    stack_ok &= rc == 0 &&
                stack_check("kws_int8", used, kws_int8_STACK_BYTES, library, kws_int8_STACK_CALLS);
    return ok && !differ && stack_ok && io_ok && mem_ok ? 0 : 1;
}
