/* One more section in a relocatable ELF object (codegen/llvm/elf.c): the weights of
 * `kiln compile --emit obj`, written beside the code LLVM made without LLVM holding them. */
#ifndef KN_ELF_H
#define KN_ELF_H

#include "ir/diag.h"

#include <stdio.h>

typedef struct kn_elf_section {
    const char *name;   /* the section's name, e.g. ".rodata.NAME_weights" (SHF_ALLOC, PROGBITS) */
    const char *symbol; /* an undefined symbol of the object, defined at the section's start */
    size_t size;        /* bytes of data */
    size_t align;       /* the section's alignment (a power of two) */
    /* writes exactly `size` bytes to f at its position; 0 or a kn_status it reported */
    kn_status (*write)(void *user, FILE *f);
    void *user;
} kn_elf_section;

/* Writes the relocatable ELF object obj[0..size) (ELF32 or ELF64, little-endian) to f,
 * positioned at 0, with section s added and its symbol defined (binding and visibility
 * kept, type object, s->size bytes). An object that is not such, or lacks the symbol,
 * is reported as an internal error. */
kn_status kn_elf_write_with_section(kn_ctx *cx, FILE *f, const unsigned char *obj, size_t size,
                                    const kn_elf_section *s);

#endif
