/* Unit tests of the host's cache sizes (targets/targets.c): kn_target_read_caches over
 * hand-made sysfs cache directories (sizes in bytes worked out by hand), the fallback to
 * 0 when there is nothing to read, and "native" resolved on the machine the test runs
 * on: its caches are the host's sysfs ones (or sysconf's), non-zero where the host says. */
#include "targets/target.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

/* root/index<i>/{level,type,size}; a NULL field leaves its file out */
static void put(int i, const char *level, const char *type, const char *size) {
    char path[256];
    snprintf(path, sizeof path, "%s/index%d", root, i);
    mkdir(path, 0700);
    const char *names[3] = {"level", "type", "size"}, *vals[3] = {level, type, size};
    for (int f = 0; f < 3; f++) {
        if (!vals[f]) continue;
        snprintf(path, sizeof path, "%s/index%d/%s", root, i, names[f]);
        FILE *fp = fopen(path, "w");
        if (fp) fprintf(fp, "%s\n", vals[f]), fclose(fp);
    }
}

static void clear(void) {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'/index*", root);
    CHECK(system(cmd) == 0);
}

int main(void) {
    int l1d = -1, l2 = -1;
    strcpy(root, "/tmp/kn_test_target_XXXXXX");
    CHECK(mkdtemp(root) != NULL);

    /* this Intel Xeon's layout: L1d 48K, L1i 64K (not data), L2 2048K, L3 */
    put(0, "1", "Data", "48K");
    put(1, "1", "Instruction", "64K");
    put(2, "2", "Unified", "2048K");
    put(3, "3", "Unified", "491520K");
    kn_target_read_caches(root, &l1d, &l2);
    CHECK(l1d == 49152);
    CHECK(l2 == 2097152);

    /* the instruction cache listed first is skipped; sizes in M and plain bytes */
    clear();
    put(0, "1", "Instruction", "32K");
    put(1, "1", "Data", "65536");
    put(2, "2", "Unified", "1M");
    kn_target_read_caches(root, &l1d, &l2);
    CHECK(l1d == 65536);
    CHECK(l2 == 1048576);

    /* fallbacks: a missing size, an unparsable one, no type file: 0 for that cache */
    clear();
    put(0, "1", "Data", NULL);
    put(2, "2", "Unified", "big");
    kn_target_read_caches(root, &l1d, &l2);
    CHECK(l1d == 0);
    CHECK(l2 == 0);
    clear();
    put(0, "1", NULL, "48K");
    kn_target_read_caches(root, &l1d, &l2);
    CHECK(l1d == 0);

    /* no such directory: both 0 */
    clear();
    rmdir(root);
    l1d = l2 = -1;
    kn_target_read_caches(root, &l1d, &l2);
    CHECK(l1d == 0 && l2 == 0);

    /* "native" on this host: its caches are what the host's sysfs says, or sysconf's
     * where sysfs says nothing (glibc answers from CPUID on x86) */
    const kn_target *nat = kn_target_resolve(kn_target_find("native"));
    int sl1d, sl2;
    kn_target_read_caches("/sys/devices/system/cpu/cpu0/cache", &sl1d, &sl2);
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
    if (!sl1d && sysconf(_SC_LEVEL1_DCACHE_SIZE) > 0) sl1d = (int)sysconf(_SC_LEVEL1_DCACHE_SIZE);
    if (!sl2 && sysconf(_SC_LEVEL2_CACHE_SIZE) > 0) sl2 = (int)sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    CHECK(nat->l1d_bytes == sl1d);
    CHECK(nat->l2_bytes == sl2);
    printf("native: l1d %d bytes, l2 %d bytes\n", nat->l1d_bytes, nat->l2_bytes);
#if defined(__linux__) && defined(__x86_64__)
    /* every x86-64 Linux host reports both (sysfs or CPUID) */
    CHECK(nat->l1d_bytes > 0);
    CHECK(nat->l2_bytes > 0);
#endif
    /* named targets keep their table values: cortex-m4 says nothing of caches */
    const kn_target *m4 = kn_target_resolve(kn_target_find("cortex-m4"));
    CHECK(m4->l1d_bytes == 0 && m4->l2_bytes == 0);
    CHECK(kn_target_resolve(kn_target_find("x86-64-avx512"))->l2_bytes == 1048576);

    /* the FP/SIMD datapath from CPUID 0x8000001A's EAX: narrower than the vectors or 0 */
    CHECK(kn_target_fp_datapath(false, 0x6, 512) == 0);  /* no such leaf (Intel) */
    CHECK(kn_target_fp_datapath(true, 0x6, 512) == 256); /* FP256 + MOVU: AMD Zen 4 */
    CHECK(kn_target_fp_datapath(true, 0xe, 512) == 0);   /* FP512 as well: full width */
    CHECK(kn_target_fp_datapath(true, 0x6, 256) == 0);   /* AVX2 vectors on 256-bit units */
    CHECK(kn_target_fp_datapath(true, 0x1, 256) == 128); /* FP128 only: AVX on halves */
    CHECK(kn_target_fp_datapath(true, 0x0, 512) == 0);   /* the leaf says nothing */
    const kn_target *z4 = kn_target_resolve(kn_target_find("x86-64-zen4"));
    CHECK(z4 && z4->fp_datapath_bits == 256 && kn_target_fp_split(z4));
    CHECK(!kn_target_fp_split(kn_target_resolve(kn_target_find("x86-64-avx512"))));
    CHECK(!kn_target_fp_split(NULL));
    printf("native: fp datapath %d bits (0: as wide as its %d-bit vectors)\n",
           nat->fp_datapath_bits, nat->vector_bits);
    return TEST_DONE();
}
