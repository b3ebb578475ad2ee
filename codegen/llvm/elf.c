/* A section added to a relocatable ELF object: how `kiln compile --emit obj` puts big
 * weights into its object without handing them to LLVM (docs/robustness.md, compile
 * memory). LLVM writes the code, which refers to the weights through an undefined
 * hidden symbol; this file copies that object with one more section, whose bytes a
 * callback streams, and defines the symbol at the section's start.
 *
 * The new file is the old one unchanged except for the ELF header's section table
 * fields and the symbol's entry, followed by the section's data, a new section-name
 * table (the old names plus the new one) and a new section header table (the old
 * headers, the name table's pointing at its new copy, and the new section's). The old
 * name and header tables stay behind as bytes no header points at, which ELF allows.
 * Symbol indices do not move, so the relocations stay as they are. ELF32 and ELF64,
 * little-endian (every target kiln has: x86-64, AArch64, Arm). */
#include "codegen/llvm/elf.h"

#include <elf.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Where a field is in its structure, for either class. */
typedef struct field {
    size_t off, len;
} field;

#define F(T, f)                                                                                    \
    { offsetof(T, f), sizeof(((T *)0)->f) }

typedef struct elf_class {
    field shoff, shentsize, shnum, shstrndx, type;
    size_t shdr_size, sym_size;
    field sh_name, sh_type, sh_flags, sh_offset, sh_size, sh_link, sh_addralign;
    field st_name, st_info, st_shndx, st_value, st_size;
} elf_class;

/* The field table of one ELF class (B: 32 or 64), from <elf.h>'s structures. */
#define ELF_CLASS(B)                                                                               \
    {                                                                                              \
        F(Elf##B##_Ehdr, e_shoff), F(Elf##B##_Ehdr, e_shentsize), F(Elf##B##_Ehdr, e_shnum),       \
            F(Elf##B##_Ehdr, e_shstrndx), F(Elf##B##_Ehdr, e_type), sizeof(Elf##B##_Shdr),         \
            sizeof(Elf##B##_Sym), F(Elf##B##_Shdr, sh_name), F(Elf##B##_Shdr, sh_type),            \
            F(Elf##B##_Shdr, sh_flags), F(Elf##B##_Shdr, sh_offset), F(Elf##B##_Shdr, sh_size),    \
            F(Elf##B##_Shdr, sh_link), F(Elf##B##_Shdr, sh_addralign), F(Elf##B##_Sym, st_name),   \
            F(Elf##B##_Sym, st_info), F(Elf##B##_Sym, st_shndx), F(Elf##B##_Sym, st_value),        \
            F(Elf##B##_Sym, st_size),                                                              \
    }

static const elf_class elf64 = ELF_CLASS(64);
static const elf_class elf32 = ELF_CLASS(32);

/* Little-endian loads and stores of a field at base. */
static uint64_t get(const unsigned char *base, field f) {
    uint64_t v = 0;
    for (size_t i = f.len; i-- > 0;) v = v << 8 | base[f.off + i];
    return v;
}

static void put(unsigned char *base, field f, uint64_t v) {
    for (size_t i = 0; i < f.len; i++, v >>= 8) base[f.off + i] = (unsigned char)(v & 0xff);
}

static uint64_t align_up(uint64_t x, uint64_t a) {
    return (x + a - 1) / a * a;
}

static bool in_file(uint64_t off, uint64_t len, size_t size) {
    return off <= size && len <= size - off;
}

static kn_status bad_object(kn_ctx *cx, const char *why) {
    return kn_diag(cx, NULL, KN_EINTERNAL, "cannot add the weights to LLVM's object: %s", why);
}

/* Writes n zero bytes. */
static bool zeros(FILE *f, uint64_t n) {
    static const unsigned char z[64];
    for (; n; n -= n < sizeof z ? n : sizeof z)
        if (fwrite(z, 1, n < sizeof z ? n : sizeof z, f) != (n < sizeof z ? n : sizeof z))
            return false;
    return true;
}

kn_status kn_elf_write_with_section(kn_ctx *cx, FILE *f, const unsigned char *obj, size_t size,
                                    const kn_elf_section *s) {
    if (size < EI_NIDENT || memcmp(obj, ELFMAG, SELFMAG)) return bad_object(cx, "not ELF");
    if (obj[EI_DATA] != ELFDATA2LSB) return bad_object(cx, "not little-endian");
    const elf_class *C = obj[EI_CLASS] == ELFCLASS64   ? &elf64
                         : obj[EI_CLASS] == ELFCLASS32 ? &elf32
                                                       : NULL;
    if (!C || size < (C == &elf64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
        return bad_object(cx, "bad ELF class");
    if (get(obj, C->type) != ET_REL) return bad_object(cx, "not a relocatable object");
    uint64_t shoff = get(obj, C->shoff), shnum = get(obj, C->shnum),
             shstrndx = get(obj, C->shstrndx);
    if (get(obj, C->shentsize) != C->shdr_size || shnum == 0 || shnum + 1 >= SHN_LORESERVE ||
        shstrndx >= shnum || !in_file(shoff, shnum * C->shdr_size, size))
        return bad_object(cx, "bad section header table");
    const unsigned char *sh = obj + shoff;
#define SH(i) (sh + (size_t)(i)*C->shdr_size)
    for (uint64_t i = 0; i < shnum; i++)
        if (get(SH(i), C->sh_type) != SHT_NOBITS &&
            !in_file(get(SH(i), C->sh_offset), get(SH(i), C->sh_size), size))
            return bad_object(cx, "a section lies outside the file");

    unsigned char *out = malloc(size);
    if (!out) return kn_diag(cx, NULL, KN_ELIMIT, "out of memory");
    memcpy(out, obj, size);

    /* the symbol: undefined, in the symbol table, by name */
    unsigned char *sym = NULL;
    for (uint64_t i = 0; i < shnum && !sym; i++) {
        if (get(SH(i), C->sh_type) != SHT_SYMTAB) continue;
        uint64_t link = get(SH(i), C->sh_link);
        if (link >= shnum) break;
        const char *names = (const char *)obj + get(SH(link), C->sh_offset);
        uint64_t nsize = get(SH(link), C->sh_size);
        uint64_t n = get(SH(i), C->sh_size) / C->sym_size;
        unsigned char *syms = out + get(SH(i), C->sh_offset);
        for (uint64_t k = 1; k < n && !sym; k++) {
            unsigned char *e = syms + k * C->sym_size;
            uint64_t name = get(e, C->st_name);
            if (get(e, C->st_shndx) == SHN_UNDEF && name < nsize &&
                !strncmp(names + name, s->symbol, nsize - name) && strlen(s->symbol) < nsize - name)
                sym = e;
        }
    }
    if (!sym) {
        free(out);
        return bad_object(cx, "the weights' symbol is not in it");
    }
    unsigned info = (unsigned)get(sym, C->st_info);
    put(sym, C->st_info, (info & ~0xfu) | STT_OBJECT); /* ELF32_ST_TYPE/ELF64: the low 4 bits */
    put(sym, C->st_shndx, shnum);
    put(sym, C->st_value, 0);
    put(sym, C->st_size, s->size);

    /* the new layout: data, names, headers */
    uint64_t data_off = align_up(size, s->align ? s->align : 1);
    uint64_t old_names = get(SH(shstrndx), C->sh_offset), old_nsize = get(SH(shstrndx), C->sh_size);
    uint64_t names_off = data_off + s->size, names_size = old_nsize + strlen(s->name) + 1;
    uint64_t headers_off = align_up(names_off + names_size, 8);
    put(out, C->shoff, headers_off);
    put(out, C->shnum, shnum + 1);

    kn_status st = KN_OK;
    bool ok = fwrite(out, 1, size, f) == size && zeros(f, data_off - size);
    free(out);
    if (ok) {
        long before = ftell(f);
        st = s->write(s->user, f);
        if (!st && before >= 0 && (uint64_t)(ftell(f) - before) != s->size)
            st = bad_object(cx, "the section's data has the wrong size");
    }
    if (!st && ok)
        ok = fwrite(obj + old_names, 1, old_nsize, f) == old_nsize &&
             fwrite(s->name, 1, strlen(s->name) + 1, f) == strlen(s->name) + 1 &&
             zeros(f, headers_off - names_off - names_size);
    unsigned char *hdr = malloc((shnum + 1) * C->shdr_size);
    if (!hdr) ok = false;
    if (!st && ok) {
        memcpy(hdr, sh, shnum * C->shdr_size);
        put(hdr + shstrndx * C->shdr_size, C->sh_offset, names_off);
        put(hdr + shstrndx * C->shdr_size, C->sh_size, names_size);
        unsigned char *n = hdr + shnum * C->shdr_size;
        memset(n, 0, C->shdr_size);
        put(n, C->sh_name, old_nsize);
        put(n, C->sh_type, SHT_PROGBITS);
        put(n, C->sh_flags, SHF_ALLOC);
        put(n, C->sh_offset, data_off);
        put(n, C->sh_size, s->size);
        put(n, C->sh_addralign, s->align ? s->align : 1);
        ok = fwrite(hdr, 1, (shnum + 1) * C->shdr_size, f) == (shnum + 1) * C->shdr_size;
    }
    free(hdr);
#undef SH
    if (!st && !ok) st = kn_diag(cx, NULL, KN_EIO, "cannot write the object file");
    return st;
}
