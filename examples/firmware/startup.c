/* Startup code for the Arm MPS2/MPS3 boards QEMU emulates (mps2-an385, mps2-an386,
 * mps2-an505, mps3-an547): the vector table, a reset handler that turns the FPU (and on
 * the M55 Helium, which shares its enable bits) on before any float instruction can run,
 * copies .data from flash, zeroes .bss, opens newlib's semihosting streams and returns
 * main's value to QEMU through semihosting's exit. Symbols come from firmware.ld.
 * A fault ends QEMU with a nonzero status instead of hanging the test. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start__[], __bss_end__[];
extern uint32_t __stack_top[];
extern int main(void);
extern void initialise_monitor_handles(void); /* newlib's rdimon: semihosting stdio */

void reset_handler(void);
void fault_handler(void);
/* newlib's exit() runs __libc_fini_array, which calls _fini; -nostartfiles leaves out the
 * crti.o that defines it (and _init), and this firmware has no constructors. */
void _init(void);
void _fini(void);
void _init(void) {}
void _fini(void) {}

/* Semihosting SYS_EXIT (0x18) with a reason other than ADP_Stopped_ApplicationExit:
 * QEMU exits with status 1. Plain registers and a BKPT, usable in any state. */
__attribute__((naked, noreturn)) void fault_handler(void) {
    __asm volatile("movs r0, #0x18\n"
                   "ldr r1, =0x20023\n" /* ADP_Stopped_InternalError */
                   "bkpt 0xab\n"
                   "1: b 1b\n");
}

/* Initial stack pointer, then the handlers: reset, NMI, HardFault, MemManage, BusFault,
 * UsageFault, SecureFault (Armv8-M). Nothing here enables interrupts. */
__attribute__((section(".vectors"), used)) void (*const vectors[16])(void) = {
    (void (*)(void))(uintptr_t)__stack_top,
    reset_handler,
    fault_handler,
    fault_handler,
    fault_handler,
    fault_handler,
    fault_handler,
    fault_handler,
};

static void start_c(void) __attribute__((noreturn, used));

static void start_c(void) {
    size_t n = (size_t)((char *)__data_end - (char *)__data_start);
    if (n && __data_load != __data_start) memcpy(__data_start, __data_load, n);
    memset(__bss_start__, 0, (size_t)((char *)__bss_end__ - (char *)__bss_start__));
    initialise_monitor_handles();
    exit(main());
}

/* The FPU first, in assembly: at -O2 the compiler may use FPU registers in start_c's copy
 * loops (memcpy/memset), which would fault with the coprocessors off. CPACR is 0xE000ED88;
 * CP10 and CP11 full access are bits 20-23. */
__attribute__((naked, noreturn)) void reset_handler(void) {
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
    __asm volatile("ldr r0, =0xE000ED88\n"
                   "ldr r1, [r0]\n"
                   "orr r1, r1, #0x00F00000\n"
                   "str r1, [r0]\n"
                   "dsb\n"
                   "isb\n" ::
                       : "r0", "r1", "memory");
#endif
    __asm volatile("b start_c");
}
