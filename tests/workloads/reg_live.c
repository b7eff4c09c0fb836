/* reg_live.c - holds two live blocks (3000 and 5000 bytes) only in r8 and
 * r10 (registers the kernel keeps across a system call) while it loops on
 * an inline `syscall` (getppid), until a SIGTERM ends it: nothing is lost
 * (tests/integration/check_last_leak.sh). x86-64 only; elsewhere it says
 * "unsupported" and exits 77. Built with -O2.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#if defined(__x86_64__)
__attribute__((noinline)) static void spin(void)
{
    char *a = malloc(3000), *b = malloc(5000);
    if (!a || !b) exit(2);
    a[0] = 1;
    b[0] = 2;
    if (write(1, "ready\n", 6) != 6) exit(2);
    register char *ra __asm__("r8") = a;
    register char *rb __asm__("r10") = b;
    a = b = NULL;
    /* the callee-saved registers cleared: the blocks are in r8 and r10 alone */
    __asm__ volatile("xor %%ebx, %%ebx; xor %%r12d, %%r12d; xor %%r13d, %%r13d; "
                     "xor %%r14d, %%r14d; xor %%r15d, %%r15d" ::
                         : "rbx", "r12", "r13", "r14", "r15");
    for (;;) {
        long ret;
        __asm__ volatile("syscall"
                         : "=a"(ret)
                         : "0"(110L), "r"(ra), "r"(rb)
                         : "rcx", "r11", "memory");
    }
}
#endif

int main(void)
{
#if defined(__x86_64__)
    spin();
#endif
    puts("unsupported");
    return 77;
}
