/* Diagnostics: formats "FILE: node 'NAME' (OP): message" into the context. */
#include "ir/diag.h"
#include "ir/graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kn_ctx_init(kn_ctx *cx, const char *file) {
    memset(cx, 0, sizeof *cx);
    cx->file = file;
}

void kn_ctx_clear(kn_ctx *cx) {
    cx->status = KN_OK;
    cx->msg[0] = 0;
}

/* The library's own wording: no front end's options. */
static const char *const neutral_hints[KN_HINT_COUNT] = {
    [KN_HINT_SHAPE_OPT] = "input shape",
    [KN_HINT_DIM_OPT] = "dimension",
    [KN_HINT_LENGTH] = "its length must be known before compiling",
    [KN_HINT_FIX_SHAPES] = "give the input dimensions fixed sizes",
    [KN_HINT_BIND] = "make the input a constant of the model",
    [KN_HINT_NO_LOWERING] = "the reference interpreter runs it",
    [KN_HINT_EMIT_OPENCL] = "compile for it as OpenCL",
    [KN_HINT_EMIT_OBJ] = "compile for it to an object file",
    [KN_HINT_STRING_BYTES] = "raise the maximum string size",
};

const char *kn_hint_text(const kn_ctx *cx, kn_hint h) {
    KN_ASSERT(h >= 0 && h < KN_HINT_COUNT);
    const char *t = cx && cx->hints ? cx->hints[h] : NULL;
    return t ? t : neutral_hints[h];
}

/* "FILE: node 'NAME' (OP): message" into buf. */
static void format(char *buf, size_t cap, const char *file, const kn_node *n, const char *fmt,
                   va_list ap) {
    size_t len = 0;
    buf[0] = 0;
    if (file) len += (size_t)snprintf(buf + len, cap - len, "%s: ", file);
    if (n && len < cap)
        len += (size_t)snprintf(buf + len, cap - len,
                                "node '%s' (%s): ", n->name && n->name[0] ? n->name : "<unnamed>",
                                n->op_type);
    if (len < cap) vsnprintf(buf + len, cap - len, fmt, ap);
}

kn_status kn_vdiag(kn_ctx *cx, const kn_node *n, kn_status st, const char *fmt, va_list ap) {
    if (cx->status != KN_OK) return cx->status;
    cx->status = st;
    format(cx->msg, sizeof cx->msg, cx->file, n, fmt, ap);
    return st;
}

void kn_warn(kn_ctx *cx, const kn_node *n, const char *fmt, ...) {
    if (!cx || !cx->on_warning) return;
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    format(buf, sizeof buf, cx->file, n, fmt, ap);
    va_end(ap);
    cx->on_warning(cx->hook_user, buf);
}

kn_status kn_diag(kn_ctx *cx, const kn_node *n, kn_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    kn_vdiag(cx, n, st, fmt, ap);
    va_end(ap);
    return cx->status;
}

void kn_assert_fail(const char *expr, const char *file, int line) {
    fprintf(stderr, "kiln: internal error: %s:%d: assertion '%s' failed\n", file, line, expr);
    abort();
}
