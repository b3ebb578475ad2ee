/* Generated C in a unit test: a program's C emitted into a folder of the test's temporary
 * directory with a main.c the test writes beside it, then built with $CC (or cc) at -O1
 * and run in that folder. */
#ifndef KN_C_HARNESS_H
#define KN_C_HARNESS_H

#include "codegen/c/emit_c.h"
#include "ir/kir.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

/* p's C files in tmp/name (made if missing; its path in dir, cap bytes), and main.c there
 * opened for writing (the caller's to close), or NULL if any step failed. */
static inline FILE *ch_emit(kn_ctx *cx, const kn_kprog *p, const char *tmp, const char *name,
                            char *dir, size_t cap) {
    char cmd[4200], path[4200];
    snprintf(dir, cap, "%s/%s", tmp, name);
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    kn_c_options opt = {0};
    if (system(cmd) != 0 || kn_emit_c_files(cx, p, &opt, dir) != KN_OK) return NULL;
    snprintf(path, sizeof path, "%s/main.c", dir);
    return fopen(path, "w");
}

/* Builds main.c and the model's C in dir into `run` and runs it there, its standard output
 * to out (a file name in dir, or NULL: the test's); whether both succeeded. */
static inline int ch_build_run(const char *dir, const char *out) {
    const char *cc = getenv("CC");
    char cmd[8400];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s -std=c11 -O1 -o run main.c m.c -lm && ./run%s%s", dir,
             cc && cc[0] ? cc : "cc", out ? " > " : "", out ? out : "");
    return system(cmd) == 0;
}

static inline bool ch_floats_file(const char *dir, const char *name, int i, float *v, size_t n,
                                  bool write) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s%d.bin", dir, name, i);
    FILE *f = fopen(path, write ? "wb" : "rb");
    if (!f) return false;
    bool ok = (write ? fwrite(v, sizeof *v, n, f) : fread(v, sizeof *v, n, f)) == n;
    return fclose(f) == 0 && ok;
}

/* p's C (ch_emit into tmp/name) run through m_run_array on nin float inputs and nout float
 * outputs (in_n[i] and out_n[j] elements), which pass through files x<i>.bin and y<j>.bin;
 * whether every step succeeded (the outputs are then in out). */
static inline bool ch_run_floats(kn_ctx *cx, const kn_kprog *p, const char *tmp, const char *name,
                                 int nin, const float *const *in, const size_t *in_n, int nout,
                                 float *const *out, const size_t *out_n) {
    char dir[2048];
    FILE *f = ch_emit(cx, p, tmp, name, dir, sizeof dir);
    if (!f) return false;
    bool ok = true;
    for (int i = 0; i < nin; i++)
        ok = ok && ch_floats_file(dir, "x", i, (float *)in[i], in_n[i], true);
    fprintf(f, "#include \"m.h\"\n#include <stdio.h>\n#include <stdlib.h>\n"
               "static int io(int i, const char *n, float *v, size_t k, int w) {\n"
               "  char p[32];\n  snprintf(p, sizeof p, \"%%s%%d.bin\", n, i);\n"
               "  FILE *f = fopen(p, w ? \"wb\" : \"rb\");\n"
               "  size_t d = f ? (w ? fwrite(v, 4, k, f) : fread(v, 4, k, f)) : 0;\n"
               "  if (f) fclose(f);\n  return d != k;\n}\n"
               "int main(void) {\n  static const size_t in_n[] = {");
    for (int i = 0; i < nin; i++) fprintf(f, "%zu, ", in_n[i]);
    fprintf(f, "0}, out_n[] = {");
    for (int j = 0; j < nout; j++) fprintf(f, "%zu, ", out_n[j]);
    fprintf(f,
            "0};\n  const void *in[%d];\n  void *out[%d];\n"
            "  void *arena = aligned_alloc(m_ARENA_ALIGN, (m_ARENA_SIZE + 63) / 64 * 64);\n"
            "  for (int i = 0; i < %d; i++) {\n"
            "    float *v = malloc(in_n[i] * 4);\n"
            "    if (!v || io(i, \"x\", v, in_n[i], 0)) return 1;\n    in[i] = v;\n  }\n"
            "  for (int j = 0; j < %d; j++)\n"
            "    if (!(out[j] = calloc(out_n[j], 4))) return 1;\n"
            "  if (m_run_array(in, out, NULL, arena)) return 1;\n"
            "  for (int j = 0; j < %d; j++)\n"
            "    if (io(j, \"y\", out[j], out_n[j], 1)) return 1;\n  return 0;\n}\n",
            nin, nout, nin, nout, nout);
    ok = fclose(f) == 0 && ok && ch_build_run(dir, NULL);
    for (int j = 0; j < nout; j++) ok = ok && ch_floats_file(dir, "y", j, out[j], out_n[j], false);
    return ok;
}

#endif
