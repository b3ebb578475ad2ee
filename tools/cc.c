/* Compiling generated C with the system compiler, for the c backend's models and the
 * opencl backend's host kernels: a temporary folder, $CC, dlopen. */
#include "tools/cc.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a SIGINT, SIGTERM or SIGHUP that stops kiln while it compiles must clean up: the
 * temporary folders in use and the compiler running in one (the CLI's only process-wide
 * state; cc_tmp_dir registers a folder, cc_remove_dir forgets it). */
enum { CC_MAX_TMP = 4 };
static char cc_tmp[CC_MAX_TMP][4096];
static volatile sig_atomic_t cc_tmp_used[CC_MAX_TMP];
static volatile sig_atomic_t cc_child; /* the running tool's pid, 0 when none */

/* Stops the running tool, removes the folders with rm (fork, execve and waitpid are
 * async-signal-safe), then dies of the same signal. */
static void cc_on_signal(int sig) {
    pid_t child = (pid_t)cc_child;
    if (child > 0) {
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
    }
    for (int i = 0; i < CC_MAX_TMP; i++) {
        if (!cc_tmp_used[i]) continue;
        pid_t pid = fork();
        if (pid == 0) {
            char *argv[] = {"rm", "-rf", cc_tmp[i], NULL}, *envp[] = {NULL};
            execve("/bin/rm", argv, envp);
            _exit(127);
        }
        if (pid > 0) waitpid(pid, NULL, 0);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Installs cc_on_signal for the signals that stop a process, except ignored ones (nohup). */
static void cc_catch_signals(void) {
    static bool done;
    if (done) return;
    done = true;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old, sa = {.sa_handler = cc_on_signal};
        sigemptyset(&sa.sa_mask);
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    }
}

/* Runs argv, stderr to errfile; returns the exit status (-1 if it could not run). */
static int run_tool(char *const *argv, const char *errfile) {
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (fd >= 0) {
            dup2(fd, 2);
            dup2(fd, 1);
        }
        execvp(argv[0], argv);
        _exit(127);
    }
    cc_child = pid;
    int status;
    pid_t done = waitpid(pid, &status, 0);
    cc_child = 0;
    if (done < 0) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

void cc_remove_dir(const char *dir) {
    for (int i = 0; i < CC_MAX_TMP; i++)
        if (cc_tmp_used[i] && !strcmp(cc_tmp[i], dir)) cc_tmp_used[i] = 0;
    if (getenv("KILN_KEEP_TMP")) {
        fprintf(stderr, "kiln: kept %s\n", dir);
        return;
    }
    char *argv[] = {"rm", "-rf", (char *)dir, NULL};
    run_tool(argv, "/dev/null");
}

/* Appends the space-separated flags in buf (tokenized in place) to argv[*argc..max). */
static void add_flags(char **argv, int *argc, int max, char *buf) {
    char *save = NULL;
    for (char *tok = strtok_r(buf, " ", &save); tok && *argc < max;
         tok = strtok_r(NULL, " ", &save))
        argv[(*argc)++] = tok;
}

kn_status backend_cc(kn_ctx *cx, const char *dir, const char *name, const char *so,
                     const char *cflags) {
    const char *cc = getenv("CC") && getenv("CC")[0] ? getenv("CC") : "cc";
    char src[4096], err[4096];
    snprintf(src, sizeof src, "%s/%s.c", dir, name);
    snprintf(err, sizeof err, "%s/cc.log", dir);
    char *argv[64] = {(char *)cc, "-std=c99", "-O1", "-Wall",    "-Wextra", "-Wpedantic", "-Werror",
                      "-fPIC",    "-shared",  "-o",  (char *)so, src,       "-lm"};
    int argc = 13;
    /* the caller's flags (bench: -O3 -march=native), then KILN_CFLAGS, e.g.
     * -fsanitize=address,undefined in the sanitizer pass */
    char flags[1024] = "", extra[1024] = "";
    const char *env = getenv("KILN_CFLAGS");
    if (cflags) snprintf(flags, sizeof flags, "%s", cflags);
    if (env) snprintf(extra, sizeof extra, "%s", env);
    add_flags(argv, &argc, 63, flags);
    add_flags(argv, &argc, 63, extra);
    argv[argc] = NULL;
    int rc = run_tool(argv, err);
    if (rc == 0) return KN_OK;
    char first[600] = "";
    FILE *f = fopen(err, "r");
    if (f) {
        while (fgets(first, sizeof first, f))
            if (strstr(first, "error")) break;
        fclose(f);
    }
    first[strcspn(first, "\n")] = 0;
    return kn_diag(cx, NULL, KN_EINTERNAL, "the generated C does not compile with %s: %s", cc,
                   first[0] ? first : "(no message)");
}

kn_status cc_tmp_dir(kn_ctx *cx, const char *prefix, char *dir, size_t size) {
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, size, "%s/%s-XXXXXX", tmp && tmp[0] ? tmp : "/tmp", prefix);
    cc_catch_signals();
    if (!mkdtemp(dir)) return kn_diag(cx, NULL, KN_EIO, "cannot create a temporary folder");
    for (int i = 0; i < CC_MAX_TMP && !getenv("KILN_KEEP_TMP"); i++) {
        if (cc_tmp_used[i] || strlen(dir) >= sizeof cc_tmp[i]) continue;
        memcpy(cc_tmp[i], dir, strlen(dir) + 1);
        cc_tmp_used[i] = 1;
        break;
    }
    return KN_OK;
}

kn_status backend_cc_load(kn_ctx *cx, const char *src, size_t len, void **lib) {
    *lib = NULL;
    char dir[4096];
    kn_status made = cc_tmp_dir(cx, "kiln-host", dir, sizeof dir);
    if (made) return made;
    char path[4200], so[4200];
    snprintf(path, sizeof path, "%s/host.c", dir);
    snprintf(so, sizeof so, "%s/host.so", dir);
    FILE *f = fopen(path, "wb");
    kn_status st = KN_OK;
    if (!f || fwrite(src, 1, len, f) != len)
        st = kn_diag(cx, NULL, KN_EIO, "cannot write %s", path);
    if (f && fclose(f) && !st) st = kn_diag(cx, NULL, KN_EIO, "cannot write %s", path);
    if (!st) st = backend_cc(cx, dir, "host", so, NULL);
    if (!st && !(*lib = dlopen(so, RTLD_NOW | RTLD_LOCAL)))
        st = kn_diag(cx, NULL, KN_EINTERNAL, "cannot load the compiled host code: %s", dlerror());
    cc_remove_dir(dir); /* the loaded object stays mapped */
    return st;
}
