/* Runs model m (kiln compile --emit c --name m --target cortex-m4) on the inputs of
 * data.h and compares every output byte with the expected ones there (bit-exact);
 * prints "ok N bytes" or the first mismatches, returns 0 when all are equal. data.h
 * (written by tests/quant/cortex_m4.sh) defines in0..inN, want0..wantM and the lists
 * below. */
#include "m.h"

#include <stdio.h>

#include "data.h"

extern void initialise_monitor_handles(void);

static _Alignas(m_ARENA_ALIGN) unsigned char arena[m_ARENA_SIZE + 1];
static unsigned char got[m_NUM_OUTPUTS][OUT_MAX];

int main(void) {
    initialise_monitor_handles();
    void *outs[m_NUM_OUTPUTS];
    for (int k = 0; k < m_NUM_OUTPUTS; k++) outs[k] = got[k];
    int st = m_run_array(inputs, outs, 0, arena);
    if (st) {
        printf("m_run returned %d\n", st);
        return 1;
    }
    long bad = 0, total = 0;
    for (int k = 0; k < m_NUM_OUTPUTS; k++)
        for (long i = 0; i < want_size[k]; i++, total++)
            if (got[k][i] != wants[k][i] && bad++ < 5)
                printf("output %d byte %ld: got %d, want %d\n", k, i, got[k][i], wants[k][i]);
    if (bad)
        printf("%ld of %ld bytes differ\n", bad, total);
    else
        printf("ok %ld bytes\n", total);
    return bad != 0;
}
