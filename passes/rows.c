/* The rows pass: the block of a Transpose and the rows a step of a Softmax row kernel.
 * requires: kir; breaks: nothing (a rebuilt kernel reads and writes the same buffers).
 *
 * Two lowerings build a form with one free parameter: a Transpose whose output's last
 * axis reads the input across rows copies in blocks of output columns, the input's
 * contiguous axis inside each block (ir/lower/tensor.c, kn_sched.tblock), and the Softmax
 * row kernel takes several rows a step (ir/lower/rows.c, kn_sched.smrows). This pass
 * chooses both from the target description and a schedule file:
 *
 *   tblock: kn_tblock_default (ir/kir.h): 16 output columns where the rows the block
 *           reads lie 256 bytes apart or more, else the plain nest (1). The block's input
 *           lines (one a column) stay in L1 while the contiguous axis runs over them, and
 *           16 columns of f32 are one 64-byte output line. The target description has no
 *           cache line size or L1 associativity, so the block is 16 on every target (a
 *           target field for the line would set it: line / element size);
 *   smrows: kn_smrows_default: on CPUs and microcontrollers the most of 4, 2 dividing the
 *           rows, else 1; OpenCL devices 1 (one row a work-item).
 *
 * A schedule file's value replaces the choice: tblock=1 the plain nest, another value
 * blocks of that many columns (it must divide the last axis into two blocks or more);
 * smrows 1 to KN_SOFTMAX_MAX_ROWS dividing the rows. A value the kernel cannot take is
 * a KN_EINVAL naming the file and the kernel.
 *
 * The lowering builds the same defaults first, so that a program keeps its variable numbers (and
 * its generated code) when the pass changes nothing; where the choice differs, the pass runs the
 * op's lowering again on a rewriting builder, asking for its value (kl_want_sched). */
#include "ir/kir.h"
#include "ir/ops.h"
#include "passes/pass.h"
#include "passes/schedule.h"
#include "targets/target.h"

#include <string.h>

/* The bytes between the input rows a Transpose's output columns read (the input stride
 * of its last output axis), from its perm and input shape. */
static int64_t transpose_row_bytes(kn_ctx *cx, const kn_node *n, const kn_kbuf *x) {
    const int64_t *perm;
    int np = kn_attr_ints(cx, n, "perm", &perm);
    if (kn_failed(cx)) return 0;
    int r = x->rank;
    int64_t xs[KN_MAX_RANK];
    kn_strides(r, x->dims, xs);
    int64_t st = xs[np < 0 ? 0 : perm[r - 1]];
    return st * (int64_t)kn_dtype_get(x->dtype)->size;
}

/* The schedule's source, for messages. */
static kn_status refuse(kn_ctx *cx, const kn_kprog *p, int k, const char *fmt, int v, int64_t ext) {
    const kn_node *n = p->kernels[k]->node;
    char what[200];
    snprintf(what, sizeof what, fmt, v, (long long)ext);
    return kn_diag(cx, NULL, KN_EINVAL, "schedule '%s': kernel %d '%s' %s: %s",
                   kn_schedule_path(p->schedule), k, n->name, n->op_type, what);
}

kn_status kn_kpass_rows(kn_ctx *cx, kn_kprog *p) {
    const kn_target *t = p->target;
    for (int k = 0; k < p->nkernels; k++) {
        kn_kernel *kern = p->kernels[k];
        const kn_node *n = kern->node;
        bool tr = n && n->op == KN_OP_TRANSPOSE && kern->sched.tblock;
        bool sm = n && n->op == KN_OP_SOFTMAX && kern->sched.smrows;
        if (!tr && !sm) continue;
        /* one buffer read, one written (the row kernel's last pass loads y too) */
        kn_kbuf *x, *x2, *y;
        if (!kn_kernel_io(kern->body, &x, &x2, &y) || !x || !y) continue;
        if (x == y) x = x2, x2 = NULL;
        if (!x || x == y || (x2 && x2 != y)) continue;
        const kn_sched *ov = kn_schedule_for(p, k);
        kn_sched want = kern->sched;
        if (tr) {
            int64_t cols = y->dims[y->rank - 1];
            int64_t rb = transpose_row_bytes(cx, n, x);
            if (kn_failed(cx)) return cx->status;
            if (ov && ov->tblock > 1 && (cols % ov->tblock || cols <= ov->tblock))
                return refuse(cx, p, k,
                              "tblock=%d does not divide the %lld output columns "
                              "into two or more blocks",
                              ov->tblock, cols);
            want.tblock = ov && ov->tblock ? ov->tblock : kn_tblock_default(rb, cols);
            if (want.tblock == kern->sched.tblock) continue;
        } else {
            int64_t rows = x->numel / x->dims[x->rank - 1];
            if (ov && ov->smrows && (ov->smrows > KN_SOFTMAX_MAX_ROWS || rows % ov->smrows))
                return refuse(cx, p, k, "smrows=%d is not 1 to 8 rows dividing the %lld rows",
                              ov->smrows, rows);
            want.smrows = ov && ov->smrows ? ov->smrows
                                           : kn_smrows_default(t && t->kind != KN_TARGET_GPU, rows);
            if (want.smrows == kern->sched.smrows) continue;
        }
        kn_kbuf *in[1] = {x}, *out[1] = {y};
        kn_ks *old = kern->body;
        kn_lower *L = kl_builder_rewrite(cx, p, k);
        kl_want_sched(L, &want);
        kn_status st = kn_op_desc(n->op)->lower(L, n, in, out);
        kl_builder_destroy(L);
        if (st || kn_failed(cx)) {
            kern->body = old;
            return kn_failed(cx) ? cx->status : st;
        }
    }
    return KN_OK;
}
