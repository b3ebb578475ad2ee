/* tests/stack/launcher.sh: a user of the model and of its stack header. */
#include "digits.h"
#include "digits_stack.h"

unsigned long digits_stack_needed(void) {
    return (unsigned long)digits_STACK_BYTES;
}
