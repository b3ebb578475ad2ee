/* Output files written all or nothing (see outfiles.h). */
#include "codegen/outfiles.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

kn_status kn_outfiles_open(kn_ctx *cx, kn_outfiles *o, const char *dir, const char *name,
                           const char *const *ext, int n) {
    KN_ASSERT(n >= 0 && n <= KN_OUTFILES_MAX);
    memset(o, 0, sizeof *o);
    o->n = n;
    kn_status st = KN_OK;
    for (int i = 0; i < n && !st; i++) {
        snprintf(o->final[i], sizeof o->final[i], "%s/%s%s", dir, name, ext[i]);
        snprintf(o->tmp[i], sizeof o->tmp[i], "%s/.%s%s.tmp%ld", dir, name, ext[i], (long)getpid());
        if (!(o->f[i] = fopen(o->tmp[i], "wb")))
            st = kn_diag(cx, NULL, KN_EIO, "cannot write in '%s': %s", dir, strerror(errno));
    }
    if (st) kn_outfiles_finish(cx, o, st);
    return st;
}

kn_status kn_outfiles_finish(kn_ctx *cx, kn_outfiles *o, kn_status st) {
    bool opened[KN_OUTFILES_MAX] = {0};
    for (int i = 0; i < o->n; i++) {
        if (!o->f[i]) continue;
        opened[i] = true;
        if (fclose(o->f[i]) != 0 && !st)
            st = kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", o->final[i]);
        o->f[i] = NULL;
    }
    for (int i = 0; i < o->n && !st; i++) {
        struct stat sb;
        long long size = stat(o->tmp[i], &sb) == 0 ? (long long)sb.st_size : 0;
        if (rename(o->tmp[i], o->final[i]) != 0)
            st = kn_diag(cx, NULL, KN_EIO, "cannot write '%s'", o->final[i]);
        else
            kn_event_emit(
                cx,
                &(kn_event){.kind = KN_EVENT_WRITE, .name = o->final[i], .size = size, .done = 1});
    }
    if (st)
        for (int i = 0; i < o->n; i++)
            if (opened[i]) remove(o->tmp[i]);
    return st;
}
