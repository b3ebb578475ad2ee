/* Operators of group 'control': see ir/ops.h for the infer/eval contract. */
#include "ir/ops.h"

const kn_opimpl kn_ops_control[] = {
    {KN_OP_COUNT, 0, 0},
};
