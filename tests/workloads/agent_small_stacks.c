/* agent_small_stacks.c - threads with small stacks allocate under the agent.
 * Run by tests/integration/agent_small_stacks.sh.
 *
 * Each thread is created with a fixed stack size (PTHREAD_STACK_MIN = 16 KiB,
 * then 32 KiB), fills a fixed share of it with its own frame (8 KiB, then
 * 16 KiB: what such a thread has room for under glibc's malloc), and at that
 * depth runs the malloc family (small, big, calloc, realloc, new-style
 * aligned). The stack below the deepest frame is painted first, so the
 * bytes the allocator calls used are measured (the main thread ran the
 * same calls first). Prints one line per thread:
 * "stack S: own O, room R, allocator used U" and exits 0; exits 1 when a
 * thread cannot be created (the agent's static TLS takes the room), and
 * dies of SIGSEGV when the allocator overflows the stack.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAINT 0x5c

struct job {
    size_t stack, own;
    size_t room, used; /* bytes below the own frame; bytes the calls touched */
    int ok;
};

static volatile size_t sink;

/* Paint `depth` bytes below this frame, run the allocator, count how far
 * the paint was overwritten. */
static void __attribute__((noinline)) allocate_here(struct job *j, size_t depth)
{
    unsigned char *sp = __builtin_frame_address(0);
    unsigned char *low = sp - depth;
    /* Paint through a volatile pointer: below sp, outside any object. */
    for (volatile unsigned char *p = low; p < sp - 256; p++)
        *p = PAINT;
    int ok = 1;
    for (int i = 0; i < 200; i++) {
        char *a = malloc(24 + (size_t)i);
        char *b = calloc(3, 100);
        char *c = malloc(1 << 20); /* big: always recorded outside `all` mode */
        void *d = NULL;
        if (posix_memalign(&d, 64, 4096) != 0) d = NULL;
        char *e = realloc(a, 5000);
        ok &= b && c && d && e;
        if (c) c[0] = c[(1 << 20) - 1] = 1;
        free(e ? e : a);
        free(b);
        free(c);
        free(d);
    }
    size_t untouched = 0;
    while (untouched < depth - 256 && low[untouched] == PAINT)
        untouched++;
    j->used = depth - untouched;
    j->ok = ok;
}

static void *thread_main(void *arg)
{
    struct job *j = arg;
    pthread_attr_t a;
    void *addr;
    size_t size;
    if (pthread_getattr_np(pthread_self(), &a) != 0) return NULL;
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    /* The thread's own frame: j->own bytes, touched. */
    volatile unsigned char own[j->own];
    for (size_t i = 0; i < j->own; i += 64)
        own[i] = (unsigned char)i;
    sink = own[0];
    unsigned char *sp = __builtin_frame_address(0);
    j->room = (size_t)(sp - (unsigned char *)addr) - j->own;
    /* Measure into all of the room but a page's margin for signal frames. */
    allocate_here(j, j->room > 1024 ? j->room - 512 : j->room);
    return NULL;
}

int main(void)
{
    /* The main thread allocates first, as programs do: lazy PLT slots of the
     * libraries on the path (libunwind's among them) are bound then, on the
     * main stack (the first resolution saves the register file there). */
    struct job warm = {0};
    allocate_here(&warm, 16384);
    struct job jobs[] = {{.stack = PTHREAD_STACK_MIN, .own = 2048}, {.stack = 32768, .own = 16384}};
    for (size_t i = 0; i < sizeof jobs / sizeof jobs[0]; i++) {
        struct job *j = &jobs[i];
        pthread_attr_t a;
        pthread_t t;
        pthread_attr_init(&a);
        pthread_attr_setstacksize(&a, j->stack);
        int r = pthread_create(&t, &a, thread_main, j);
        pthread_attr_destroy(&a);
        if (r != 0) {
            printf("stack %zu: pthread_create: %s\n", j->stack, strerror(r));
            return 1;
        }
        pthread_join(t, NULL);
        printf("stack %zu: own %zu, room %zu, allocator used %zu, %s\n", j->stack, j->own, j->room,
               j->used, j->ok ? "ok" : "allocation failed");
        if (!j->ok) return 1;
    }
    return 0;
}
