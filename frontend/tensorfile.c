/* .npy and .pb tensor files. */
#include "frontend/tensorfile.h"
#include "frontend/onnx.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct {
    const char *descr;
    kn_dtype t;
} npy_types[] = {
    {"f4", KN_F32}, {"f8", KN_F64}, {"f2", KN_F16}, {"u1", KN_U8},  {"i1", KN_I8},  {"u2", KN_U16},
    {"i2", KN_I16}, {"i4", KN_I32}, {"u4", KN_U32}, {"i8", KN_I64}, {"u8", KN_U64}, {"b1", KN_BOOL},
};

/* Value of 'key' in the header dict: pointer just after "'key':" and spaces. */
static const char *dict_value(const char *h, const char *key) {
    char pat[32];
    snprintf(pat, sizeof pat, "'%s'", key);
    const char *p = strstr(h, pat);
    if (!p) return NULL;
    p += strlen(pat);
    while (*p == ' ') p++;
    if (*p != ':') return NULL;
    p++;
    while (*p == ' ') p++;
    return p;
}

kn_status kn_npy_decode(kn_ctx *cx, kn_arena *a, const void *buf, size_t len, kn_tensor **out) {
    const unsigned char *b = buf;
    if (len < 10 || memcmp(b, "\x93NUMPY", 6))
        return kn_diag(cx, NULL, KN_EINVAL, "not a .npy file");
    int major = b[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (len < 12) return kn_diag(cx, NULL, KN_EINVAL, "truncated .npy header");
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        hstart = 12;
    } else {
        return kn_diag(cx, NULL, KN_EUNSUPPORTED, ".npy format version %d is not supported", major);
    }
    if (hlen > len - hstart) return kn_diag(cx, NULL, KN_EINVAL, "truncated .npy header");
    char *h = kn_arena_strndup(a, (const char *)b + hstart, hlen);
    const char *descr = dict_value(h, "descr"), *fo = dict_value(h, "fortran_order"),
               *shape = dict_value(h, "shape");
    if (!descr || !fo || !shape || *descr != '\'' || *shape != '(')
        return kn_diag(cx, NULL, KN_EINVAL, "malformed .npy header");
    if (!strncmp(fo, "True", 4))
        return kn_diag(cx, NULL, KN_EUNSUPPORTED,
                       ".npy file is in Fortran order; save it in C order "
                       "(numpy.ascontiguousarray)");
    char order = descr[1];
    kn_dtype dt = KN_UNDEF;
    for (size_t i = 0; i < sizeof npy_types / sizeof *npy_types; i++)
        if (!strncmp(descr + 2, npy_types[i].descr, 2) && descr[4] == '\'') dt = npy_types[i].t;
    if (!dt || order == '>')
        return kn_diag(cx, NULL, KN_EUNSUPPORTED, ".npy dtype %.8s is not supported", descr);
    int64_t dims[KN_MAX_RANK];
    int rank = 0;
    const char *p = shape + 1;
    for (;;) {
        while (*p == ' ' || *p == ',') p++;
        if (*p == ')') break;
        char *end;
        long long d = strtoll(p, &end, 10);
        if (end == p || d < 0) return kn_diag(cx, NULL, KN_EINVAL, "malformed .npy shape");
        if (rank == KN_MAX_RANK)
            return kn_diag(cx, NULL, KN_EUNSUPPORTED, ".npy rank exceeds %d", KN_MAX_RANK);
        dims[rank++] = d;
        p = end;
        while (*p == 'L') p++;
    }
    kn_type ty = kn_type_make(dt, rank, dims);
    if (kn_type_numel(&ty) < 0)
        return kn_diag(cx, NULL, KN_EINVAL, ".npy shape: product of dimensions overflows");
    /* the data present bounds the size before anything is allocated */
    size_t numel = (size_t)kn_type_numel(&ty), esize = kn_dtype_get(dt)->size, off = hstart + hlen;
    if (numel > SIZE_MAX / esize) return kn_diag(cx, NULL, KN_ELIMIT, ".npy tensor is too large");
    size_t nbytes = numel * esize;
    if (len - off != nbytes)
        return kn_diag(cx, NULL, KN_EINVAL, ".npy data is %zu bytes, its shape needs %zu",
                       len - off, nbytes);
    kn_tensor *t = kn_tensor_new(a, &ty);
    if (!t) return kn_diag(cx, NULL, KN_ELIMIT, ".npy tensor is too large");
    if (nbytes) memcpy(t->data, b + off, nbytes);
    *out = t;
    return KN_OK;
}

kn_status kn_tensorfile_read(kn_ctx *cx, kn_arena *a, const char *path, kn_kind kind,
                             kn_tensor **out) {
    void *buf;
    size_t len;
    if (kn_read_file(cx, path, &buf, &len)) return cx->status;
    kn_status st;
    if (len >= 6 && !memcmp(buf, "\x93NUMPY", 6))
        st = kn_npy_decode(cx, a, buf, len, out);
    else
        st = kn_onnx_decode_value(cx, a, buf, len, kind, out);
    free(buf);
    if (st) { /* prefix the file name */
        size_t pl = strlen(path) + 2, ml = strlen(cx->msg);
        if (pl + ml < sizeof cx->msg) {
            memmove(cx->msg + pl, cx->msg, ml + 1);
            memcpy(cx->msg, path, pl - 2);
            memcpy(cx->msg + pl - 2, ": ", 2);
        }
    }
    return st;
}

static kn_status npy_encode(kn_ctx *cx, const kn_tensor *t, void **buf, size_t *len) {
    const char *descr = NULL;
    for (size_t i = 0; i < sizeof npy_types / sizeof *npy_types; i++)
        if (npy_types[i].t == t->type.dtype) descr = npy_types[i].descr;
    if (!descr || t->type.kind != KN_KIND_TENSOR)
        return kn_diag(cx, NULL, KN_EUNSUPPORTED, "a %s tensor cannot be written as .npy",
                       kn_dtype_name(t->type.dtype));
    char h[256], shape[200] = "";
    size_t n = 0;
    for (int i = 0; i < t->type.rank; i++)
        n += (size_t)snprintf(shape + n, sizeof shape - n, "%lld,%s", (long long)t->type.dims[i],
                              i + 1 < t->type.rank ? " " : "");
    if (t->type.rank > 1) shape[n - 1] = 0; /* "(2, 3)" but "(5,)" */
    int hl = snprintf(h, sizeof h, "{'descr': '%c%s', 'fortran_order': False, 'shape': (%s), }",
                      descr[1] == '1' ? '|' : '<', descr, shape);
    size_t total = 10 + (size_t)hl + 1;
    size_t pad = (64 - total % 64) % 64;
    size_t hdr = (size_t)hl + pad + 1, nbytes = kn_tensor_nbytes(t);
    unsigned char *b = malloc(10 + hdr + nbytes);
    KN_ASSERT(b);
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (unsigned char)(hdr & 0xff);
    b[9] = (unsigned char)(hdr >> 8);
    memcpy(b + 10, h, (size_t)hl);
    memset(b + 10 + hl, ' ', pad);
    b[10 + hdr - 1] = '\n';
    if (nbytes) memcpy(b + 10 + hdr, t->data, nbytes);
    *buf = b;
    *len = 10 + hdr + nbytes;
    return KN_OK;
}

kn_status kn_tensorfile_write(kn_ctx *cx, const char *path, const kn_tensor *t) {
    void *buf;
    size_t len;
    size_t pl = strlen(path);
    kn_status st = pl > 3 && !strcmp(path + pl - 3, ".pb")
                       ? kn_onnx_encode_tensor(cx, t, "", &buf, &len)
                       : npy_encode(cx, t, &buf, &len);
    if (st) return st;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        free(buf);
        return kn_diag(cx, NULL, KN_EIO, "cannot write '%s': %s", path, strerror(errno));
    }
    size_t w = fwrite(buf, 1, len, f);
    free(buf);
    if (fclose(f) != 0 || w != len || rename(tmp, path) != 0) {
        remove(tmp);
        return kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", path);
    }
    return KN_OK;
}
