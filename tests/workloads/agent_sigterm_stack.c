/* agent_sigterm_stack.c - SIGTERM taken by a thread deep in a small stack.
 * Run by tests/integration/agent_sigterm_stack.sh.
 *
 * Usage: agent_sigterm_stack OWN. The main thread blocks SIGTERM, allocates,
 * and starts one thread with a PTHREAD_STACK_MIN (16 KiB) stack, which
 * allocates, fills OWN bytes of its stack with its own frame, prints
 * "room R" (the bytes left below that frame, down to the guard page) and
 * waits in pause(). The main thread then sends the process SIGTERM, which
 * only that thread can take: the process must die of SIGTERM (exit 143 in
 * a shell), as it does without the agent. Exits 1 on a setup error.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ready[2];
static size_t own_bytes;
static volatile unsigned char sink;

static void *thread_main(void *arg)
{
    (void)arg;
    pthread_attr_t a;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return NULL;
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    free(malloc(100)); /* the thread records before it goes deep */
    volatile unsigned char own[own_bytes];
    for (size_t i = 0; i < own_bytes; i += 64)
        own[i] = (unsigned char)i;
    sink = own[0];
    unsigned char *sp = __builtin_frame_address(0);
    /* No stdio here: printf's frame and its first allocation need more
     * stack than the rooms tested. */
    size_t room = (size_t)(sp - (unsigned char *)addr) - own_bytes;
    char line[32] = "room ", digits[24];
    int n = 0;
    do
        digits[n++] = (char)('0' + room % 10);
    while ((room /= 10) != 0);
    size_t len = 5;
    while (n > 0)
        line[len++] = digits[--n];
    line[len++] = '\n';
    if (write(1, line, len) != (ssize_t)len) return NULL;
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_UNBLOCK, &term, NULL);
    if (write(ready[1], "r", 1) != 1) return NULL;
    for (;;)
        pause();
}

int main(int argc, char **argv)
{
    if (argc != 2) return 1;
    own_bytes = strtoul(argv[1], NULL, 10);
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, NULL); /* inherited by the thread */
    free(malloc(1 << 20));
    if (pipe(ready) != 0) return 1;
    pthread_attr_t a;
    pthread_t t;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, PTHREAD_STACK_MIN);
    if (pthread_create(&t, &a, thread_main, NULL) != 0) {
        printf("pthread_create failed\n");
        return 1;
    }
    char c;
    if (read(ready[0], &c, 1) != 1) return 1;
    kill(getpid(), SIGTERM);
    pthread_join(t, NULL);
    return 1; /* not reached: SIGTERM ends the process */
}
