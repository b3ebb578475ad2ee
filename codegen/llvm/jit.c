/* Target machines, the optimization pipeline, in-process JIT (ORC LLJIT) and file
 * output for the LLVM backend.
 *
 * One LLJIT instance per compiled model: its resources (code, data) are released in
 * kn_jit_destroy, so a host can compile and free many models. Symbols the generated
 * code calls (libm) resolve from the kiln process. LLVM's targets are initialized
 * once (thread-safe with call_once). */
#include "codegen/llvm/elf.h"
#include "codegen/llvm/llvm_impl.h"

#include <llvm-c/Error.h>
#include <llvm-c/LLJIT.h>
#include <llvm-c/Orc.h>
#include <llvm-c/Transforms/PassBuilder.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <unistd.h>

static once_flag init_once = ONCE_FLAG_INIT;

static void init_targets(void) {
    LLVMInitializeAllTargetInfos();
    LLVMInitializeAllTargets();
    LLVMInitializeAllTargetMCs();
    LLVMInitializeAllAsmPrinters();
    LLVMInitializeAllAsmParsers();
}

static LLVMCodeGenOptLevel cg_level(int opt) {
    return opt <= 0   ? LLVMCodeGenLevelNone
           : opt == 1 ? LLVMCodeGenLevelLess
           : opt == 2 ? LLVMCodeGenLevelDefault
                      : LLVMCodeGenLevelAggressive;
}

kn_status kn_llvm_target_machine(kn_ctx *cx, const kn_target *t, int opt_level,
                                 LLVMTargetMachineRef *out) {
    if (t->kind == KN_TARGET_GPU)
        return kn_diag(cx, NULL, KN_EUNSUPPORTED, "target '%s' is an OpenCL device: %s", t->name,
                       kn_hint_text(cx, KN_HINT_EMIT_OPENCL));
    call_once(&init_once, init_targets);
    char *host_triple = LLVMGetDefaultTargetTriple();
    char *host_features = LLVMGetHostCPUFeatures();
    /* Normalized: LLVM's Triple reads "thumbv7em-none-eabihf" as arch-vendor-OS, with no
     * environment, so the ARM backend would not see the EABI (hard-float) environment:
     * it then named soft-float helpers __muldf3 (not __aeabi_dmul) and called the libm
     * functions of softened doubles (nearbyint, after __muldf3 on the M4's
     * single-precision FPU) with their argument in r0:r1, where the hard-float libm
     * reads d0: wrong int8 requantization on the board (tests/quant/cortex_m4.sh obj).
     * "thumbv7em-none-unknown-eabihf" is what clang passes. */
    char *triple = LLVMNormalizeTargetTriple(t->triple ? t->triple : host_triple);
    const char *cpu = kn_target_cpu_name(t);
    const char *features = t->features ? t->features : host_features;
    LLVMTargetRef target;
    char *err = NULL;
    kn_status st = KN_OK;
    if (LLVMGetTargetFromTriple(triple, &target, &err)) {
        st = kn_diag(cx, NULL, KN_EUNSUPPORTED, "LLVM has no target for '%s': %s", triple,
                     err ? err : "");
    } else {
        /* bare-metal images link statically: no GOT */
        *out = LLVMCreateTargetMachine(target, triple, cpu, features, cg_level(opt_level),
                                       t->embedded ? LLVMRelocStatic : LLVMRelocPIC,
                                       LLVMCodeModelDefault);
        if (!*out)
            st = kn_diag(cx, NULL, KN_EINTERNAL, "cannot create a target machine for '%s'", triple);
    }
    LLVMDisposeMessage(err);
    LLVMDisposeMessage(triple);
    LLVMDisposeMessage(host_triple);
    LLVMDisposeMessage(host_features);
    return st;
}

kn_status kn_llvm_optimize(kn_ctx *cx, LLVMModuleRef m, LLVMTargetMachineRef tm, const kn_target *t,
                           int opt_level) {
    kn_event_emit(cx, &(kn_event){.kind = KN_EVENT_STAGE, .name = "optimizing with LLVM"});
    char *triple = LLVMGetTargetMachineTriple(tm);
    LLVMSetTarget(m, triple);
    LLVMDisposeMessage(triple);
    LLVMTargetDataRef dl = LLVMCreateTargetDataLayout(tm);
    char *layout = LLVMCopyStringRepOfTargetData(dl);
    LLVMSetDataLayout(m, layout);
    LLVMDisposeMessage(layout);
    LLVMDisposeTargetData(dl);
    char pipeline[32];
    snprintf(pipeline, sizeof pipeline, "default<O%d>",
             opt_level < 0   ? 0
             : opt_level > 3 ? 3
                             : opt_level);
    LLVMPassBuilderOptionsRef po = LLVMCreatePassBuilderOptions();
    LLVMPassBuilderOptionsSetLoopVectorization(po, opt_level >= 2);
    LLVMPassBuilderOptionsSetSLPVectorization(po, opt_level >= 2);
    /* LLVM's loop unrolling (full, partial and runtime) off on hosted CPUs: the kernel
     * IR's own passes (tile, unroll) already unrolled the loops where they meant to, and
     * LLVM unrolling the rest again cost a third of ResNet-18's JIT compile time for no
     * run time (#16, docs/benchmarks.md). Bare-metal targets keep it: their code is
     * measured in instructions on the boards (docs/firmware.md). */
    LLVMPassBuilderOptionsSetLoopUnrolling(po, t->embedded);
    LLVMErrorRef e = LLVMRunPasses(m, pipeline, tm, po);
    LLVMDisposePassBuilderOptions(po);
    if (e) {
        char *msg = LLVMGetErrorMessage(e);
        kn_diag(cx, NULL, KN_EINTERNAL, "LLVM passes failed: %s", msg);
        LLVMDisposeErrorMessage(msg);
        return cx->status;
    }
    return KN_OK;
}

/* ---- JIT ---- */

struct kn_jit {
    LLVMOrcLLJITRef jit;
    LLVMOrcResourceTrackerRef rt;
    kn_entry_fn entry;
    void *weights; /* the small weights the code reads, one 64-byte aligned block
                      (kn_big_alloc), or all of them without a program to take from */
    void **blocks; /* the big weights taken over from the program (kn_kprog_take_data),
                      nblocks of them, each freed with kn_arena_block_free() */
    int nblocks;
};

/* Sets addr[buffer id] to where the code reads each of p's weights. With release (p
 * itself), a weight of KN_BIG_ALLOC bytes and more, held in a chunk of its own (a
 * mapping on huge pages), is taken over where the compile left it: no copy, no fresh
 * pages to fault in (ResNet-18: 75 of its 81 MB). The rest are copied into one aligned
 * block (j->weights, kn_big_alloc(): huge pages too once it is 2 MiB; smaller weights
 * in chunks of their own are calloc's, on small pages, and would cost TLB misses at run
 * time where a model has many) and their data in p freed. Without release all are
 * copied. */
static kn_status place_weights(kn_ctx *cx, const kn_kprog *p, kn_kprog *release, kn_jit *j,
                               const void **addr) {
    size_t *off = calloc((size_t)p->nbufs + 1, sizeof *off);
    const void **orig = calloc((size_t)p->nbufs + 1, sizeof *orig);
    unsigned char *copy = calloc((size_t)p->nbufs + 1, 1);
    if (release) j->blocks = calloc((size_t)p->nbufs + 1, sizeof *j->blocks);
    KN_ASSERT(off && orig && copy && (!release || j->blocks));
    size_t size = 0;
    for (int i = 0; i < p->nbufs; i++) {
        const kn_kbuf *b = p->bufs[i];
        if (!kn_kbuf_is_weight(b)) continue;
        orig[i] = b->data->data;
        int same = -1; /* an earlier buffer with the same data: the same address */
        for (int k = 0; orig[i] && k < i && same < 0; k++)
            if (orig[k] == orig[i]) same = k;
        void *block = NULL;
        if (same >= 0)
            addr[i] = addr[same];
        else if (release && orig[i] && kn_kbuf_bytes(b) >= KN_BIG_ALLOC &&
                 (block = kn_kprog_take_data(release, release->bufs[i])))
            addr[i] = orig[i], j->blocks[j->nblocks++] = block;
        if (same >= 0 || block) continue;
        copy[i] = 1;
        off[i] = size;
        size += (kn_kbuf_bytes(b) + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
    }
    unsigned char *w = j->weights = kn_big_alloc(size ? size : KN_ARENA_ALIGN);
    for (int i = 0; w && i < p->nbufs; i++) {
        if (!copy[i]) continue;
        const kn_kbuf *b = p->bufs[i];
        if (kn_kbuf_bytes(b)) memcpy(w + off[i], b->data->data, kn_kbuf_bytes(b));
        addr[i] = w + off[i];
    }
    /* once every copy is made: a released buffer may share its data with a later one */
    for (int i = 0; w && release && i < p->nbufs; i++)
        if (copy[i]) kn_kprog_release_data(release, release->bufs[i]);
    free(off);
    free(orig);
    free(copy);
    return w ? KN_OK : kn_diag(cx, NULL, KN_ELIMIT, "out of memory for the weights");
}

static void free_weights(kn_jit *j) {
    for (int i = 0; i < j->nblocks; i++) kn_arena_block_free(j->blocks[i]);
    free(j->blocks);
    kn_big_free(j->weights);
}

static kn_status orc_error(kn_ctx *cx, LLVMErrorRef e, const char *what) {
    char *msg = LLVMGetErrorMessage(e);
    kn_diag(cx, NULL, KN_EINTERNAL, "%s: %s", what, msg);
    LLVMDisposeErrorMessage(msg);
    return cx->status;
}

static kn_status jit(kn_ctx *cx, const kn_kprog *p, kn_kprog *release, const kn_target *t,
                     int opt_level, kn_par_for par_for, const kn_profile *prof, kn_jit **out);

kn_status kn_llvm_jit(kn_ctx *cx, const kn_kprog *p, const kn_target *t, int opt_level,
                      kn_par_for par_for, kn_jit **out) {
    return jit(cx, p, NULL, t, opt_level, par_for, NULL, out);
}

kn_status kn_llvm_jit_profiled(kn_ctx *cx, const kn_kprog *p, const kn_target *t, int opt_level,
                               kn_par_for par_for, const kn_profile *prof, kn_jit **out) {
    return jit(cx, p, NULL, t, opt_level, par_for, prof, out);
}

kn_status kn_llvm_jit_releasing(kn_ctx *cx, kn_kprog *p, const kn_target *t, int opt_level,
                                kn_par_for par_for, const kn_profile *prof, kn_jit **out) {
    return jit(cx, p, p, t, opt_level, par_for, prof, out);
}

static kn_status jit(kn_ctx *cx, const kn_kprog *p, kn_kprog *release, const kn_target *t,
                     int opt_level, kn_par_for par_for, const kn_profile *prof, kn_jit **out) {
    *out = NULL;
    if (t->triple || t->embedded)
        return kn_diag(cx, NULL, KN_EUNSUPPORTED, "target '%s' cannot run in this process; %s",
                       t->name, kn_hint_text(cx, KN_HINT_EMIT_OBJ));
    LLVMTargetMachineRef tm;
    if (kn_llvm_target_machine(cx, t, opt_level, &tm)) return cx->status;
    LLVMOrcThreadSafeContextRef tsc = LLVMOrcCreateNewThreadSafeContext();
    LLVMContextRef ctx = LLVMOrcThreadSafeContextGetContext(tsc);
    LLVMModuleRef m;
    /* the code reads the weights where the JIT keeps them: LLVM never copies or
     * scans them (46 MB for ResNet-18) */
    kn_jit *j = calloc(1, sizeof *j);
    const void **waddr = calloc((size_t)p->nbufs + 1, sizeof *waddr);
    KN_ASSERT(j && waddr);
    kn_status st = place_weights(cx, p, release, j, waddr);
    if (!st) st = kn_llvm_build_module_profiled(cx, p, ctx, waddr, par_for, prof, t->features, &m);
    free(waddr);
    if (st || kn_llvm_optimize(cx, m, tm, t, opt_level)) {
        if (!st) LLVMDisposeModule(m);
        LLVMOrcDisposeThreadSafeContext(tsc);
        LLVMDisposeTargetMachine(tm);
        free_weights(j);
        free(j);
        return cx->status;
    }
    /* the JIT builds code for the same machine the module was optimized for */
    LLVMOrcJITTargetMachineBuilderRef jtmb =
        LLVMOrcJITTargetMachineBuilderCreateFromTargetMachine(tm);
    LLVMOrcLLJITBuilderRef jb = LLVMOrcCreateLLJITBuilder();
    LLVMOrcLLJITBuilderSetJITTargetMachineBuilder(jb, jtmb);
    LLVMErrorRef e = LLVMOrcCreateLLJIT(&j->jit, jb);
    if (e) {
        LLVMDisposeModule(m);
        LLVMOrcDisposeThreadSafeContext(tsc);
        free_weights(j);
        free(j);
        return orc_error(cx, e, "cannot create the JIT");
    }
    LLVMOrcJITDylibRef dylib = LLVMOrcLLJITGetMainJITDylib(j->jit);
    LLVMOrcDefinitionGeneratorRef gen;
    e = LLVMOrcCreateDynamicLibrarySearchGeneratorForProcess(
        &gen, LLVMOrcLLJITGetGlobalPrefix(j->jit), NULL, NULL);
    if (!e) LLVMOrcJITDylibAddGenerator(dylib, gen);
    j->rt = LLVMOrcJITDylibCreateResourceTracker(dylib);
    LLVMOrcThreadSafeModuleRef tsm = LLVMOrcCreateNewThreadSafeModule(m, tsc);
    LLVMOrcDisposeThreadSafeContext(tsc); /* the module keeps the context alive */
    if (!e)
        e = LLVMOrcLLJITAddLLVMIRModuleWithRT(j->jit, j->rt, tsm);
    else
        LLVMOrcDisposeThreadSafeModule(tsm);
    LLVMOrcExecutorAddress addr = 0;
    char name[128];
    snprintf(name, sizeof name, "%s_run_array", p->name);
    if (!e) e = LLVMOrcLLJITLookup(j->jit, &addr, name);
    if (e) {
        kn_jit_destroy(j);
        return orc_error(cx, e, "cannot compile the model");
    }
    *(void **)&j->entry = (void *)(uintptr_t)addr;
    *out = j;
    return KN_OK;
}

kn_entry_fn kn_jit_entry(const kn_jit *j) {
    return j->entry;
}

void kn_jit_destroy(kn_jit *j) {
    if (!j) return;
    if (j->rt) {
        LLVMErrorRef e = LLVMOrcResourceTrackerRemove(j->rt);
        if (e) LLVMConsumeError(e);
        LLVMOrcReleaseResourceTracker(j->rt);
    }
    if (j->jit) {
        LLVMErrorRef e = LLVMOrcDisposeLLJIT(j->jit);
        if (e) LLVMConsumeError(e);
    }
    free_weights(j);
    free(j);
}

/* ---- files ---- */

/* Weights of at least this many bytes go into an object file's section that kiln writes
 * itself (codegen/llvm/elf.h), so LLVM never holds them (two copies: its constant and
 * the object writer's buffer). Smaller ones stay LLVM constants it may fold into code. */
#define SECTION_WEIGHT_MIN 1024

/* Whether objects for this triple are ELF (every kiln target's: Linux, bare-metal EABI). */
static bool elf_triple(const char *triple) {
    return strstr(triple, "linux") || strstr(triple, "eabi") || strstr(triple, "-elf");
}

/* The weights of the section: off[buffer id] each one's offset (SIZE_MAX: not in it),
 * 64-byte aligned, in buffer order; returns the section's size (0: none). */
static size_t section_layout(const kn_kprog *p, size_t *off) {
    size_t at = 0;
    for (int i = 0; i < p->nbufs; i++) {
        off[i] = SIZE_MAX;
        const kn_kbuf *b = p->bufs[i];
        if (!kn_kbuf_is_weight(b) || kn_kbuf_bytes(b) < SECTION_WEIGHT_MIN) continue;
        off[i] = at;
        at += (kn_kbuf_bytes(b) + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
    }
    return at;
}

typedef struct section_writer {
    kn_ctx *cx;
    kn_kprog *p;
    const size_t *off;
} section_writer;

/* Writes the section's weights at their offsets, freeing each once written. */
static kn_status write_section(void *user, FILE *f) {
    section_writer *w = user;
    size_t at = 0;
    static const unsigned char zero[KN_ARENA_ALIGN];
    for (int i = 0; i < w->p->nbufs; i++) {
        if (w->off[i] == SIZE_MAX) continue;
        kn_kbuf *b = w->p->bufs[i];
        size_t n = kn_kbuf_bytes(b);
        KN_ASSERT(b->data && b->data->data && w->off[i] >= at && w->off[i] - at < KN_ARENA_ALIGN);
        if (fwrite(zero, 1, w->off[i] - at, f) != w->off[i] - at ||
            fwrite(b->data->data, 1, n, f) != n)
            return kn_diag(w->cx, NULL, KN_EIO, "cannot write the object file");
        at = w->off[i] + n;
        kn_kprog_release_data(w->p, b);
    }
    size_t end = (at + KN_ARENA_ALIGN - 1) & ~(size_t)(KN_ARENA_ALIGN - 1);
    if (fwrite(zero, 1, end - at, f) != end - at)
        return kn_diag(w->cx, NULL, KN_EIO, "cannot write the object file");
    return KN_OK;
}

/* Writes LLVM's object in memory to path with the weights' section added. */
static kn_status write_object(kn_ctx *cx, LLVMMemoryBufferRef mb, kn_kprog *p, const size_t *off,
                              size_t size, const char *symbol, const char *path) {
    char section[300];
    snprintf(section, sizeof section, ".rodata.%s", symbol);
    section_writer w = {cx, p, off};
    kn_elf_section s = {section, symbol, size, KN_ARENA_ALIGN, write_section, &w};
    FILE *f = fopen(path, "wb");
    if (!f) return kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", path);
    kn_status st = kn_elf_write_with_section(cx, f, (const unsigned char *)LLVMGetBufferStart(mb),
                                             LLVMGetBufferSize(mb), &s);
    if (fclose(f) != 0 && !st) st = kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", path);
    return st;
}

kn_status kn_llvm_emit_file(kn_ctx *cx, kn_kprog *p, const kn_target *t, int opt_level,
                            const char *kind, const char *path) {
    LLVMTargetMachineRef tm;
    if (kn_llvm_target_machine(cx, t, opt_level, &tm)) return cx->status;
    /* an ELF object: the big weights in a section of kiln's, beside LLVM's code */
    size_t *off = NULL, section = 0;
    char symbol[200];
    snprintf(symbol, sizeof symbol, "%s_weights", p->name);
    char *triple = LLVMGetTargetMachineTriple(tm);
    if (!strcmp(kind, "obj") && elf_triple(triple)) {
        off = calloc((size_t)p->nbufs + 1, sizeof *off);
        KN_ASSERT(off);
        section = section_layout(p, off);
    }
    LLVMDisposeMessage(triple);
    LLVMContextRef ctx = LLVMContextCreate();
    LLVMModuleRef m = NULL;
    kn_status st = kn_llvm_build_module_releasing(cx, p, ctx, section ? off : NULL, symbol, &m);
    if (!st) st = kn_llvm_optimize(cx, m, tm, t, opt_level);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    char *err = NULL;
    if (!st) {
        int fail;
        LLVMMemoryBufferRef mb = NULL;
        if (!strcmp(kind, "llvm"))
            fail = LLVMPrintModuleToFile(m, tmp, &err);
        else if (section)
            fail = LLVMTargetMachineEmitToMemoryBuffer(tm, m, LLVMObjectFile, &err, &mb);
        else
            fail = LLVMTargetMachineEmitToFile(
                tm, m, tmp, !strcmp(kind, "asm") ? LLVMAssemblyFile : LLVMObjectFile, &err);
        if (fail) {
            st = kn_diag(cx, NULL, KN_EIO, "cannot write '%s': %s", path, err ? err : "");
        } else if (mb) {
            LLVMDisposeModule(m); /* the code is in mb: LLVM's memory can go first */
            m = NULL;
            st = write_object(cx, mb, p, off, section, symbol, tmp);
            LLVMDisposeMemoryBuffer(mb);
        }
        if (!st && rename(tmp, path) != 0)
            st = kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", path);
        if (st) remove(tmp);
    }
    LLVMDisposeMessage(err);
    if (m) LLVMDisposeModule(m);
    LLVMContextDispose(ctx);
    LLVMDisposeTargetMachine(tm);
    free(off);
    return st;
}
