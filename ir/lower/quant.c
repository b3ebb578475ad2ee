/* Lowerings of group 'quant' to the kernel IR: see ir/kir.h. */
#include "ir/kir.h"

const kn_oplower kn_lower_quant[] = {
    {KN_OP_COUNT, 0},
};
