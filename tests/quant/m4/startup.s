/* Reset for the mps2-an386 test images: the FPU is enabled (CPACR CP10/CP11 full access)
 * before any instruction that could use it, .bss is zeroed, then main's return value
 * goes to exit (newlib's semihosting exit ends QEMU). */
    .syntax unified
    .cpu cortex-m4
    .thumb
    .section .vectors, "a"
    .word __stack_top
    .word reset_handler
    .rept 14
    .word fault_handler
    .endr

    .text
    .thumb_func
    .global reset_handler
reset_handler:
    ldr r0, =0xE000ED88
    ldr r1, [r0]
    orr r1, r1, #(0xF << 20)
    str r1, [r0]
    dsb
    isb
    ldr r0, =__bss_start__
    ldr r1, =__bss_end__
    movs r2, #0
1:  cmp r0, r1
    bge 2f
    str r2, [r0], #4
    b 1b
2:  bl main
    bl exit
3:  b 3b

    .thumb_func
fault_handler:
    movs r0, #99
    bl exit

/* exit runs the fini arrays; -nostartfiles leaves out crti's empty _init/_fini */
    .thumb_func
    .global _init
_init:
    bx lr
    .thumb_func
    .global _fini
_fini:
    bx lr
