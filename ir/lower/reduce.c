/* Lowerings of group 'reduce' to the kernel IR: see ir/kir.h. */
#include "ir/kir.h"

const kn_oplower kn_lower_reduce[] = {
    {KN_OP_COUNT, 0},
};
