/* Target descriptions: what passes and code generators ask about the machine code
 * runs on. Passes query fields (vector width, int8 dot product, caches); they never
 * test a target's name. "native" is resolved by the LLVM backend from the host. */
#ifndef KN_TARGET_H
#define KN_TARGET_H

#include <stdbool.h>
#include <stdint.h>

typedef enum kn_float_abi {
    KN_FLOAT_ABI_DEFAULT,
    KN_FLOAT_ABI_HARD,
    KN_FLOAT_ABI_SOFT
} kn_float_abi;

/* What kind of machine: decides which schedules apply (register tiles and threads on
 * CPUs; code size and no threads on microcontrollers; work-items on OpenCL devices). */
typedef enum kn_target_kind {
    KN_TARGET_CPU,
    KN_TARGET_MCU,
    KN_TARGET_GPU, /* an OpenCL device */
} kn_target_kind;

/* An integer dot-product instruction: products of narrow integers packed into 32-bit
 * words, summed into an i32 accumulator lane (the kernel IR's KX_DOT node, ir/kir.h). */
typedef enum kn_dot {
    KN_DOT_NONE,   /* none: integer contractions multiply and add lane by lane */
    KN_DOT_S16X2,  /* two i16 x i16: x86 pmaddwd (SSE2 and later), Cortex-M DSP SMLAD */
    KN_DOT_U8S8X4, /* four u8 x s8: AVX-512 VNNI vpdpbusd */
    KN_DOT_S8S8X4, /* four s8 x s8: AArch64 SDOT */
    KN_DOT_S8X16,  /* a reduction: sixteen s8 x s8 (two vectors of four words) summed into
                      one scalar i32 accumulator: Helium VMLADAVA.S8 */
    KN_DOT_S16X2X, /* two i16 x i16, the second word's halves exchanged: Cortex-M DSP SMLADX
                      (never a target's int8_dot: the depthwise row words use it beside
                      KN_DOT_S16X2, passes/depthwise.c) */
} kn_dot;

typedef struct kn_target {
    const char *name;        /* as given to --target */
    const char *triple;      /* LLVM target triple; NULL: the host's */
    const char *cpu;         /* LLVM CPU name; NULL: the host's */
    const char *features;    /* LLVM feature string ("+avx2,+fma"); NULL: the host's */
    int vector_bits;         /* widest SIMD register, 0 for none */
    int vector_registers;    /* how many */
    kn_dot int8_dot;         /* its integer dot product (integer tiles use it), or none */
    kn_dot int8_red;         /* its reduction of 16 int8 products into a scalar (KN_DOT_S8X16):
                                integer tiles along input channels use it, or none */
    bool fma;                /* fused f32 multiply-add: the LLVM backend's fmuladd fuses, and
                                generated C fuses kernel-IR fma (KN_FMAF) where its compiler
                                has a fast fmaf (docs/generated-c.md) */
    bool fma_scalar;         /* its vector multiply-add takes the broadcast operand from a
                                general register (MVE VFMA Qd, Qn, Rm): a register tile needs
                                no vector register for it (generated C: KN_FMA4FS) */
    bool byte_gather;        /* one instruction loads 4 bytes at a step of 2, 4 or 8 widened
                                into i32 lanes, and one stores 4 i32 lanes narrowed to bytes
                                at any step (MVE's gather VLDRB.U32 Qd, [Rn, Qm] and scatter
                                VSTRB.32 Qd, [Rn, Qm], offset vectors from VIDUP): kernel
                                IR's strided 8-bit vector loads and stores (kx_vload_strided,
                                kl_store_strided) cost what contiguous ones cost (generated
                                C: KN_LD4BUS / KN_LD4BSS, KN_ST4BSS) */
    bool word_gather;        /* one instruction loads 4 f32 words at any step into the lanes
                                (MVE's gather VLDRW.U32 Qd, [Rn, Qm, UXTW #2]): kernel IR's
                                strided f32 vector loads cost what contiguous ones cost
                                (generated C: KN_LD4FG) */
    bool cvt_rne;            /* one instruction converts an f32 to i32 rounding to nearest, ties
                                to even, saturating, NaN 0 (the Armv7-M/Armv8-M FPU's VCVTR
                                under the default FPSCR, MVE's VCVTN): kernel IR's KX_CVTRN
                                costs one instruction (QuantizeLinear, ir/lower/quant.c) */
    int l1d_bytes, l2_bytes; /* data caches (per core), 0 if unknown */
    /* The width of the core's floating-point/SIMD execution units in bits where it is
     * narrower than vector_bits: each vector operation then runs as vector_bits /
     * fp_datapath_bits parts, and a core makes that many times fewer vector multiply-adds
     * a cycle (AMD Zen 4: 512-bit registers on 256-bit units, one 512-bit FMA a cycle
     * where an Intel Xeon with two 512-bit ports makes two). 0: as wide as vector_bits.
     * "native" reads it from CPUID 0x8000001A (kn_target_fp_datapath); passes that weigh
     * multiply-adds against bytes read ask kn_target_fp_split. */
    int fp_datapath_bits;
    kn_float_abi float_abi;
    bool embedded; /* bare metal: no libm symbols beyond the C99 set, no threads */
    /* The GCC/Clang options that select this machine for the C compiler building the
     * generated code into firmware (-mcpu, -mthumb, -mfpu, -mfloat-abi); NULL: none
     * needed (hosted targets). `kiln help --cc-flags T` prints it, kiln_target_cc_flags()
     * gives it to CMake. */
    const char *cc_flags;
    const char *description;
    kn_target_kind kind;
    /* OpenCL devices: the largest work-group (work-items along NDRange dimension 0) the
     * parallel pass gives a kernel; at most the device's CL_DEVICE_MAX_WORK_GROUP_SIZE.
     * vector_bits is then the width of the vectors inside one work-item (0: scalar
     * work-items). */
    int workgroup_max;
    /* The machine's natural integer width for loop indices and index arithmetic: 32 on
     * 32-bit microcontrollers, where each i64 add, compare or multiply takes 2-4
     * instructions; 0 means 64. Pass 'index' narrows a program's indices to it where
     * every index value fits (kn_kprog.index_bits). */
    int index_bits;
    /* The most f32 registers one load fills, consecutive registers (VLDM on the Armv7-M/
     * Armv8-M FPU: up to 16 S registers), on a scalar FPU of vector_registers registers;
     * 0: none. Matrix-vector tiles hold blocks of inputs and weights in such registers
     * (passes/tile.c, mm_fblock). */
    int fp_block;
    /* Generated C keeps each kernel a function of its own (GCC `noinline`): GCC 12 inlines
     * the kernels, each called once, into one large model_run and compiles some of them
     * worse there (MobileNetV2 int8 on the M55: a band of a 1x1 convolution 171 K
     * instructions inlined, its twin band 107 K; docs/firmware.md) */
    bool kernel_noinline;
} kn_target;

/* The target named name, or NULL. The table is static; entries are never freed. */
const kn_target *kn_target_find(const char *name);
/* t with the fields "native" leaves open (vector width, registers, caches) measured on the
 * machine kiln runs on; any other target as it is. The result is static. */
const kn_target *kn_target_resolve(const kn_target *t);
/* The LLVM CPU name of target t: t->cpu, or for "native" (cpu NULL) the one LLVM reports
 * for the machine kiln runs on ("znver4" on a Zen 4; "generic" if it reports none). The
 * tuning table keys its entries by it (passes/tuned.c), so native and the named target of
 * the same CPU find the same entries. Static. */
const char *kn_target_cpu_name(const kn_target *t);
/* The first-level data and second-level cache sizes of a Linux sysfs cache directory
 * ("/sys/devices/system/cpu/cpu0/cache": index<i>/level, type, size), in bytes; 0 for
 * each one not found (no such directory, unreadable or unparsable files). "native"
 * takes its l1d_bytes and l2_bytes from it (sysconf where sysfs says nothing). */
void kn_target_read_caches(const char *dir, int *l1d, int *l2);
/* The second-level cache of t in bytes, or `otherwise` where t is NULL or does not say
 * (the passes' assumption for a target of unknown caches differs by pass). */
static inline int64_t kn_target_l2(const kn_target *t, int64_t otherwise) {
    return t && t->l2_bytes > 0 ? t->l2_bytes : otherwise;
}
/* The FP/SIMD datapath width that CPUID leaf 0x8000001A's EAX reports (AMD: bit 0 FP128,
 * bit 2 FP256, "the internal FP/SIMD execution datapath is N bits wide"; bit 3 taken as
 * FP512), for vectors of vector_bits: the narrower width where it is narrower, else 0.
 * `have` false (the leaf is past the CPU's highest extended leaf, as on Intel): 0. */
int kn_target_fp_datapath(bool have, unsigned eax, int vector_bits);
/* Whether t's vector operations run in parts on narrower units (fp_datapath_bits set
 * and below vector_bits): multiply-adds cost t more than their loads. */
static inline bool kn_target_fp_split(const kn_target *t) {
    return t && t->fp_datapath_bits > 0 && t->fp_datapath_bits < t->vector_bits;
}
/* The dot product's name as --help, schedules and the kernel-IR text print it:
 * "none", "s16x2", "u8s8x4", "s8s8x4", "s8x16". */
const char *kn_dot_name(kn_dot d);
/* Every target, for --help: a NULL-terminated array. */
const kn_target *const *kn_target_list(void);

#endif
