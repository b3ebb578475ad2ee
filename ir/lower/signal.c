/* Lowerings of group 'signal' to the kernel IR: see ir/kir.h. */
#include "ir/kir.h"

const kn_oplower kn_lower_signal[] = {
    {KN_OP_COUNT, 0},
};
