/* Lowerings of group 'image' to the kernel IR: see ir/kir.h. */
#include "ir/kir.h"

const kn_oplower kn_lower_image[] = {
    {KN_OP_COUNT, 0},
};
