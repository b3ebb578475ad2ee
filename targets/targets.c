/* The table of targets kiln knows. Add a target by adding an entry. */
#include "targets/target.h"

#include <string.h>
#include <threads.h>

static const kn_target targets[] = {
    {"native", NULL, NULL, NULL, 0, 0, false, 0, 0, KN_FLOAT_ABI_DEFAULT, false,
     "the machine kiln runs on (CPU and features from LLVM)"},
    {"generic", NULL, "generic", "", 128, 16, false, 32768, 262144, KN_FLOAT_ABI_DEFAULT, false,
     "portable code for the host's architecture, no CPU-specific features"},
    {"x86-64-avx2", "x86_64-pc-linux-gnu", "haswell", "+avx2,+fma,+f16c", 256, 16, false, 32768,
     262144, KN_FLOAT_ABI_DEFAULT, false, "x86-64 with AVX2 and FMA (Haswell and later)"},
    {"x86-64-avx512", "x86_64-pc-linux-gnu", "skylake-avx512",
     "+avx512f,+avx512bw,+avx512vl,+avx512dq,+fma,+f16c", 512, 32, false, 32768, 1048576,
     KN_FLOAT_ABI_DEFAULT, false, "x86-64 with AVX-512 (Skylake-SP and later)"},
    {"aarch64", "aarch64-unknown-linux-gnu", "cortex-a76", "+neon,+dotprod", 128, 32, true, 65536,
     524288, KN_FLOAT_ABI_DEFAULT, false, "64-bit Arm with NEON and SDOT (Cortex-A76 class)"},
    {"cortex-m4", "thumbv7em-none-eabihf", "cortex-m4", "+vfp4d16sp,+dsp", 32, 0, true, 0, 0,
     KN_FLOAT_ABI_HARD, true, "Cortex-M4F, hard-float ABI (SMLAD dual multiply-accumulate)"},
    {"cortex-m7", "thumbv7em-none-eabihf", "cortex-m7", "+fp-armv8d16,+dsp", 32, 0, true, 16384, 0,
     KN_FLOAT_ABI_HARD, true, "Cortex-M7 with double-precision FPU, hard-float ABI"},
};

const kn_target *kn_target_find(const char *name) {
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++)
        if (!strcmp(targets[i].name, name)) return &targets[i];
    return NULL;
}

const kn_target *const *kn_target_list(void) {
    static const kn_target *list[sizeof targets / sizeof *targets + 1];
    for (size_t i = 0; i < sizeof targets / sizeof *targets; i++) list[i] = &targets[i];
    return list;
}

static kn_target host;
static once_flag host_once = ONCE_FLAG_INIT;

static void detect_host(void) {
    host = targets[0];
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    host.vector_bits = __builtin_cpu_supports("avx512f") ? 512
                       : __builtin_cpu_supports("avx2")  ? 256
                                                         : 128;
    host.vector_registers = host.vector_bits == 512 ? 32 : 16;
#elif defined(__aarch64__)
    host.vector_bits = 128;
    host.vector_registers = 32;
#endif
}

const kn_target *kn_target_resolve(const kn_target *t) {
    if (t != &targets[0]) return t;
    call_once(&host_once, detect_host);
    return &host;
}
