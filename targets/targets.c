/* The table of targets kiln knows. Add a target by adding an entry. */
#include "targets/target.h"

#include <llvm-c/Core.h>
#include <llvm-c/TargetMachine.h>

#include <stdio.h>
#include <string.h>
#include <threads.h>
#if defined(__unix__)
#include <unistd.h>
#endif
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

/* Designated fields: a field a target leaves out is 0 (no SIMD, no dot product,
 * unknown caches, default float ABI, hosted, a CPU). */
static const kn_target targets[] = {
    {.name = "native", .description = "the machine kiln runs on (CPU and features from LLVM)"},
    {.name = "generic",
     .cpu = "generic",
     .features = "",
     .vector_bits = 128,
     .vector_registers = 16,
     .l1d_bytes = 32768,
     .l2_bytes = 262144,
     .description = "portable code for the host's architecture, no CPU-specific features"},
    {.name = "x86-64-avx2",
     .triple = "x86_64-pc-linux-gnu",
     .cpu = "haswell",
     .features = "+avx2,+fma,+f16c",
     .vector_bits = 256,
     .fma = true,
     .vector_registers = 16,
     .int8_dot = KN_DOT_S16X2,
     .l1d_bytes = 32768,
     .l2_bytes = 262144,
     .description = "x86-64 with AVX2 and FMA (Haswell and later)"},
    {.name = "x86-64-avx512",
     .triple = "x86_64-pc-linux-gnu",
     .cpu = "skylake-avx512",
     .features = "+avx512f,+avx512bw,+avx512vl,+avx512dq,+fma,+f16c",
     .vector_bits = 512,
     .fma = true,
     .vector_registers = 32,
     .int8_dot = KN_DOT_S16X2,
     .l1d_bytes = 32768,
     .l2_bytes = 1048576,
     .description = "x86-64 with AVX-512 (Skylake-SP and later)"},
    {.name = "x86-64-vnni",
     .triple = "x86_64-pc-linux-gnu",
     .cpu = "cascadelake",
     .features = "+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+fma,+f16c",
     .vector_bits = 512,
     .vector_registers = 32,
     .int8_dot = KN_DOT_U8S8X4,
     .l1d_bytes = 32768,
     .l2_bytes = 1048576,
     .description = "x86-64 with AVX-512 and VNNI (Cascade Lake, Ice Lake, Zen 4 and later)"},
    {.name = "x86-64-zen4",
     .triple = "x86_64-pc-linux-gnu",
     .cpu = "znver4",
     .features = "+avx512f,+avx512bw,+avx512vl,+avx512dq,+avx512vnni,+fma,+f16c",
     .vector_bits = 512,
     .fp_datapath_bits = 256,
     .fma = true,
     .vector_registers = 32,
     .int8_dot = KN_DOT_U8S8X4,
     .l1d_bytes = 32768,
     .l2_bytes = 1048576,
     .description = "x86-64 with AVX-512 run as two 256-bit halves (AMD Zen 4)"},
    {.name = "aarch64",
     .triple = "aarch64-unknown-linux-gnu",
     .cpu = "cortex-a76",
     .features = "+neon,+dotprod",
     .vector_bits = 128,
     .fma = true,
     .vector_registers = 32,
     .int8_dot = KN_DOT_S8S8X4,
     .l1d_bytes = 65536,
     .l2_bytes = 524288,
     .description = "64-bit Arm with NEON and SDOT (Cortex-A76 class)"},
    {.name = "cortex-m0plus",
     .triple = "thumbv6m-none-eabi",
     .cpu = "cortex-m0plus",
     .features = "",
     .vector_bits = 32,
     .vector_registers = 8,
     .float_abi = KN_FLOAT_ABI_SOFT,
     .embedded = true,
     .kind = KN_TARGET_MCU,
     .index_bits = 32,
     .cc_flags = "-mcpu=cortex-m0plus -mthumb -mfloat-abi=soft",
     .description = "Cortex-M0+, no FPU or DSP: float through libgcc's soft-float calls"},
    {.name = "cortex-m3",
     .triple = "thumbv7m-none-eabi",
     .cpu = "cortex-m3",
     .features = "",
     .vector_bits = 32,
     .vector_registers = 8,
     .float_abi = KN_FLOAT_ABI_SOFT,
     .embedded = true,
     .kind = KN_TARGET_MCU,
     .index_bits = 32,
     .cc_flags = "-mcpu=cortex-m3 -mthumb -mfloat-abi=soft",
     .description = "Cortex-M3, no FPU or DSP: float through libgcc's soft-float calls"},
    {.name = "cortex-m4",
     .triple = "thumbv7em-none-eabihf",
     .cpu = "cortex-m4",
     .features = "+vfp4d16sp,+dsp",
     .vector_bits = 32,
     .fma = true,
     .cvt_rne = true,
     .vector_registers = 32,
     .int8_dot = KN_DOT_S16X2,
     .float_abi = KN_FLOAT_ABI_HARD,
     .embedded = true,
     .kind = KN_TARGET_MCU,
     .index_bits = 32,
     .fp_block = 16,
     .cc_flags = "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16",
     .description = "Cortex-M4F, hard-float ABI (SMLAD dual multiply-accumulate)"},
    {.name = "cortex-m7",
     .triple = "thumbv7em-none-eabihf",
     .cpu = "cortex-m7",
     .features = "+fp-armv8d16,+dsp",
     .vector_bits = 32,
     .fma = true,
     .cvt_rne = true,
     .vector_registers = 32,
     .int8_dot = KN_DOT_S16X2,
     .l1d_bytes = 16384,
     .float_abi = KN_FLOAT_ABI_HARD,
     .embedded = true,
     .kind = KN_TARGET_MCU,
     .index_bits = 32,
     .fp_block = 16,
     .cc_flags = "-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16",
     .description = "Cortex-M7 with double-precision FPU, hard-float ABI"},
    {.name = "cortex-m33",
     .triple = "thumbv8m.main-none-eabihf",
     .cpu = "cortex-m33",
     .features = "+fp-armv8d16sp,+dsp",
     .vector_bits = 32,
     .fma = true,
     .cvt_rne = true,
     .vector_registers = 32,
     .int8_dot = KN_DOT_S16X2,
     .float_abi = KN_FLOAT_ABI_HARD,
     .embedded = true,
     .kind = KN_TARGET_MCU,
     .index_bits = 32,
     .fp_block = 16,
     .cc_flags = "-mcpu=cortex-m33 -mthumb -mfloat-abi=hard -mfpu=fpv5-sp-d16",
     .description = "Cortex-M33 (Armv8-M) with single-precision FPU and DSP, hard-float ABI"},
    {.name = "cortex-m55",
     .triple = "thumbv8.1m.main-none-eabihf",
     .cpu = "cortex-m55",
     .features = "+mve.fp,+fp-armv8d16,+dsp",
     .vector_bits = 128,
     .fma = true,
     .cvt_rne = true,
     .vector_registers = 8,
     .fma_scalar = true,
     .byte_gather = true,
     .word_gather = true,
     .int8_dot = KN_DOT_S16X2,
     .int8_red = KN_DOT_S8X16,
     .float_abi = KN_FLOAT_ABI_HARD,
     .embedded = true,
     .kind = KN_TARGET_MCU,
     .index_bits = 32,
     .kernel_noinline = true,
     .cc_flags = "-mcpu=cortex-m55 -mthumb -mfloat-abi=hard -mfpu=auto",
     .description = "Cortex-M55 with Helium (MVE, 128-bit vectors of 4 floats), hard-float ABI"},
    {.name = "opencl",
     .kind = KN_TARGET_GPU,
     /* PoCL's CPU device, what kiln is tested on: AVX-512 (preferred float vector width
      * 16); its work-group function loops over up to 64 work-items per call */
     .vector_bits = 512,
     .workgroup_max = 64,
     .description = "an OpenCL device (--emit opencl): parallel loops become work-items, "
                    "with vectors of 16 floats inside a work-item"},
};

const kn_target *kn_target_find(const char *name) {
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
        if (!strcmp(targets[i].name, name)) return &targets[i];
    return NULL;
}

const char *kn_dot_name(kn_dot d) {
    switch (d) {
    case KN_DOT_S16X2: return "s16x2";
    case KN_DOT_U8S8X4: return "u8s8x4";
    case KN_DOT_S8S8X4: return "s8s8x4";
    case KN_DOT_S8X16: return "s8x16";
    case KN_DOT_S16X2X: return "s16x2x";
    default: return "none";
    }
}

const kn_target *const *kn_target_list(void) {
    static const kn_target *list[sizeof targets / sizeof *targets + 1];
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) list[i] = &targets[i];
    return list;
}

/* The size in bytes of the file's "48K" / "2048K" / "1M" / "65536" (Linux sysfs cache
 * sizes), 0 if it cannot be read or does not parse. */
static int read_size(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    long v = 0;
    char unit = 0;
    int got = fscanf(f, "%ld%c", &v, &unit);
    fclose(f);
    if (got < 1 || v <= 0) return 0;
    long mul = unit == 'K' || unit == 'k' ? 1024 : unit == 'M' || unit == 'm' ? 1024 * 1024 : 1;
    return v <= (long)(0x7fffffff / mul) ? (int)(v * mul) : 0;
}

void kn_target_read_caches(const char *dir, int *l1d, int *l2) {
    *l1d = *l2 = 0;
    /* dir/index<i>/{level,type,size}: one per cache of the CPU (Linux sysfs) */
    for (int i = 0; i < 8; i++) {
        char path[512], type[32] = "";
        snprintf(path, sizeof path, "%s/index%d/level", dir, i);
        int level = read_size(path);
        if (!level) continue;
        snprintf(path, sizeof path, "%s/index%d/type", dir, i);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        int got = fscanf(f, "%31s", type);
        fclose(f);
        if (got != 1 || !strcmp(type, "Instruction")) continue;
        snprintf(path, sizeof path, "%s/index%d/size", dir, i);
        int size = read_size(path);
        if (level == 1 && !*l1d) *l1d = size;
        if (level == 2 && !*l2) *l2 = size;
    }
}

static kn_target host;
static once_flag host_once = ONCE_FLAG_INIT;

/* The host's per-core data caches into host.l1d_bytes / l2_bytes: sysfs, else sysconf
 * (glibc reads CPUID on x86), else left 0 (passes then assume their defaults). The third
 * level is not read: no pass sizes blocks by it, and a VM may report the host's whole
 * L3 (480 MB on the Intel Xeon VM of docs/benchmarks.md). */
static void detect_caches(void) {
    kn_target_read_caches("/sys/devices/system/cpu/cpu0/cache", &host.l1d_bytes, &host.l2_bytes);
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    long v;
    if (!host.l1d_bytes && (v = sysconf(_SC_LEVEL1_DCACHE_SIZE)) > 0 && v <= 0x7fffffff)
        host.l1d_bytes = (int)v;
    if (!host.l2_bytes && (v = sysconf(_SC_LEVEL2_CACHE_SIZE)) > 0 && v <= 0x7fffffff)
        host.l2_bytes = (int)v;
#endif
}

int kn_target_fp_datapath(bool have, unsigned eax, int vector_bits) {
    if (!have) return 0;
    int w = eax & 8u ? 512 : eax & 4u ? 256 : eax & 1u ? 128 : 0;
    return w && w < vector_bits ? w : 0;
}

static void detect_host(void) {
    host = targets[0];
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    host.vector_bits = __builtin_cpu_supports("avx512f") ? 512
                       : __builtin_cpu_supports("avx2")  ? 256
                                                         : 128;
    host.vector_registers = host.vector_bits == 512 ? 32 : 16;
    host.fma = __builtin_cpu_supports("fma");
    /* pmaddwd is SSE2; vpdpbusd on 512-bit vectors needs AVX-512 VNNI */
    host.int8_dot = host.vector_bits == 512 && __builtin_cpu_supports("avx512vnni") ? KN_DOT_U8S8X4
                                                                                    : KN_DOT_S16X2;
    unsigned a, b, c, d;
    bool have = (unsigned)__get_cpuid_max(0x80000000u, NULL) >= 0x8000001Au &&
                __get_cpuid(0x8000001Au, &a, &b, &c, &d);
    host.fp_datapath_bits = kn_target_fp_datapath(have, have ? a : 0, host.vector_bits);
#elif defined(__aarch64__)
    host.vector_bits = 128;
    host.fma = true;
    host.vector_registers = 32;
#endif
    detect_caches();
}

const kn_target *kn_target_resolve(const kn_target *t) {
    if (t != &targets[0]) return t;
    call_once(&host_once, detect_host);
    return &host;
}

static char host_cpu[64];
static once_flag host_cpu_once = ONCE_FLAG_INIT;

static void read_host_cpu(void) {
    char *c = LLVMGetHostCPUName();
    snprintf(host_cpu, sizeof host_cpu, "%s", c && *c ? c : "generic");
    LLVMDisposeMessage(c);
}

const char *kn_target_cpu_name(const kn_target *t) {
    if (t && t->cpu) return t->cpu;
    call_once(&host_cpu_once, read_host_cpu);
    return host_cpu;
}
