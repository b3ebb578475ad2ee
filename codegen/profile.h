/* Per-kernel timing hooks in generated code (kiln bench --profile). Off unless asked
 * for: code built without a hook has no trace of it. With one, the entry point calls
 * hook(user, k, 0) just before kernel k and hook(user, k, 1) just after it, on the
 * calling thread (a kernel's parallel loop finishes before the second call). */
#ifndef KN_PROFILE_H
#define KN_PROFILE_H

typedef void (*kn_profile_hook)(void *user, int kernel, int phase);

typedef struct kn_profile {
    kn_profile_hook hook;
    void *user; /* passed back to hook; borrowed, must outlive the code */
} kn_profile;

#endif
