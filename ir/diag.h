/* Status codes, the diagnostic context and internal assertions.
 *
 * A fallible library function returns kn_status (0 ok, negative error) and leaves
 * one message in the kn_ctx with its context: "model.onnx: node 'conv_3' (Conv):
 * kernel_shape has 3 dims, expected 2". Only the first error is kept: later ones
 * are usually consequences of it. Library code never prints or exits on bad input;
 * KN_ASSERT is for broken internal invariants only and is always on. */
#ifndef KN_DIAG_H
#define KN_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum kn_status {
    KN_OK = 0,
    KN_EINVAL = -1,       /* bad model or input: the user's problem */
    KN_EUNSUPPORTED = -2, /* valid ONNX that kiln does not handle */
    KN_EIO = -3,          /* file could not be read or written */
    KN_ELIMIT = -4,       /* a resource limit was exceeded */
    KN_EINTERNAL = -5,    /* kiln's own bug */
} kn_status;

struct kn_node;

/* Advice and option names in messages that depend on who called the library: the
 * command line says "--shape", the host API "kiln_options_set_input_shape()". Library
 * code asks for the text by id (kn_hint_text) and never spells one front end's
 * options itself; a front end sets kn_ctx.hints to its table. */
typedef enum kn_hint {
    KN_HINT_SHAPE_OPT,    /* the option that sets an input's shape ("--shape") */
    KN_HINT_DIM_OPT,      /* the option that sets a named dimension ("--dim") */
    KN_HINT_LENGTH,       /* advice: how to give a sequence input's length */
    KN_HINT_FIX_SHAPES,   /* advice: how to make input shapes static */
    KN_HINT_BIND,         /* advice: how to make an input value known at compile time */
    KN_HINT_NO_LOWERING,  /* advice: an op that code generation cannot lower yet */
    KN_HINT_EMIT_OPENCL,  /* advice: a target that is an OpenCL device */
    KN_HINT_EMIT_OBJ,     /* advice: a target that cannot run in this process */
    KN_HINT_STRING_BYTES, /* advice: raise the storage of one string */
    KN_HINT_COUNT
} kn_hint;

/* Something a long compile reports as it goes, for -v and progress displays. */
typedef enum kn_event_kind {
    KN_EVENT_PASS,   /* a pass finished: name, ms, size (nodes or kernels after it) */
    KN_EVENT_STAGE,  /* a stage starts: name ("lowering", "emitting C", "optimizing") */
    KN_EVENT_KERNEL, /* kernel done of total emitted (name: the stage) */
    KN_EVENT_WRITE,  /* size bytes written so far to file name */
} kn_event_kind;

typedef struct kn_event {
    kn_event_kind kind;
    const char *name;
    double ms;
    long long size;
    int done, total;
} kn_event;

typedef struct kn_ctx {
    const char *file; /* model path named in messages; borrowed */
    kn_status status; /* first error, KN_OK if none */
    char msg[1024];   /* message of the first error */
    int verbose;      /* 0 quiet; >0 lets passes print notes to stderr */
    /* The interpreter (runs and constant folding): most bytes of tensors one run may
     * hold in its arena (0: no limit); a node whose outputs would pass it stops the
     * run with KN_ELIMIT naming the node. */
    size_t max_memory;
    /* Optional hooks (NULL: off), called on the thread doing the work, with user. The
     * library never prints: warnings and events reach the caller only through these. */
    void (*on_warning)(void *user, const char *msg); /* one line with file and node */
    void (*on_event)(void *user, const kn_event *ev);
    void *hook_user;
    /* KN_HINT_COUNT texts indexed by kn_hint (borrowed, static), or NULL: the library's
     * own wording, which names no option of any front end. */
    const char *const *hints;
} kn_ctx;

/* The text of hint h for cx's front end (never NULL). */
const char *kn_hint_text(const kn_ctx *cx, kn_hint h);

void kn_ctx_init(kn_ctx *cx, const char *file);
/* Record an error about a node (node may be NULL). Returns the status recorded, so
 * callers can write `return kn_diag(cx, n, KN_EINVAL, "...")`. Keeps the first. */
kn_status kn_diag(kn_ctx *cx, const struct kn_node *n, kn_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
kn_status kn_vdiag(kn_ctx *cx, const struct kn_node *n, kn_status st, const char *fmt, va_list ap);
/* A warning (the compiled code differs from what the model may ask for at run time, a
 * layer kept in float, ...): formatted like kn_diag, passed to cx->on_warning, if any.
 * Never changes the status. */
void kn_warn(kn_ctx *cx, const struct kn_node *n, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Passes ev to cx->on_event, if any. */
static inline void kn_event_emit(kn_ctx *cx, const kn_event *ev) {
    if (cx && cx->on_event) cx->on_event(cx->hook_user, ev);
}
/* Clear the recorded error (used when an error is expected and handled). */
void kn_ctx_clear(kn_ctx *cx);
static inline bool kn_failed(const kn_ctx *cx) {
    return cx->status != KN_OK;
}

void kn_assert_fail(const char *expr, const char *file, int line);
#define KN_ASSERT(x) ((x) ? (void)0 : kn_assert_fail(#x, __FILE__, __LINE__))

#endif
