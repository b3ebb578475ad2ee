/* Lowerings of group 'misc' to the kernel IR: see ir/kir.h. */
#include "ir/kir.h"

const kn_oplower kn_lower_misc[] = {
    {KN_OP_COUNT, 0},
};
