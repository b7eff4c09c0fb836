/* stale_reuse.c - a lost block whose address a live block's unwritten
 * bytes still hold from their last occupant (tests/integration/
 * check_stale_reuse.sh): a 4096 B block holds a 3000 B block's address at
 * its second word; both are freed; a new 4096 B block, kept in a global to
 * the end and written at its first word alone, takes the first one's place
 * and a 3000 B block lost at once takes the other's (jemalloc's thread
 * cache hands the last freed region of a size class out first). So the
 * kept block's second word is the lost block's address unless the agent
 * handed the block out zeroed: CPython 3.12's stdin buffer did this to a
 * ctypes malloc(3000) (docs/ci.md). Prints "stale_reuse reused" when the
 * addresses came back as planned, else "stale_reuse not reused" and exits
 * 77 (the test cannot say anything then).
 *
 * With argv[1] "inplace" or "move": the kept block is a 112 B one that
 * held the 3000 B block's address at bytes 104-111, then shrank to 100 B
 * in place (the old words stay past its size) and grew back, in place to
 * 112 B or moving to 400 B, the program writing its first 100 bytes only:
 * the grown part must not hand the old address out again. Prints
 * "stale_reuse <mode>".
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void **volatile keep; /* a root: the kept block */
/* the addresses, complemented: no word here points at a block */
uintptr_t volatile were[2], got[2];

__attribute__((noinline)) static void fill(void)
{
    /* volatile: the stores must reach the block before free() (a compiler
     * drops stores into memory freed next) */
    void *volatile *old = malloc(4096);
    void *obj = malloc(3000);
    if (!old || !obj) exit(1);
    old[0] = NULL;
    old[1] = obj; /* the word that outlives both */
    were[0] = ~(uintptr_t)old;
    were[1] = ~(uintptr_t)obj;
    free(obj);
    free((void *)old);
}

__attribute__((noinline)) static void lose(void)
{
    char *p = malloc(3000); /* SITE:lose */
    if (!p) exit(1);
    memset(p, 1, 3000);
    got[1] = ~(uintptr_t)p;
}

/* The realloc modes: the kept block's grown part (see above). */
__attribute__((noinline)) static void regrow(int move)
{
    void *volatile *a = malloc(112);
    if (!a) exit(1);
    memset((void *)a, 0, 112);
    char *p = malloc(3000); /* SITE:relose */
    if (!p) exit(1);
    memset(p, 1, 3000);
    a[13] = p; /* bytes 104..111 */
    p = NULL;
    a = realloc((void *)a, 100); /* in place: past its size now */
    a = a ? realloc((void *)a, move ? 400 : 112) : NULL;
    if (!a) exit(1);
    memset((void *)a, 0, 100); /* the bytes the program owns */
    keep = (void **)a;
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        regrow(!strcmp(argv[1], "move"));
        printf("stale_reuse %s\n", argv[1]);
        return 0;
    }
    fill();
    keep = malloc(4096);
    if (!keep) return 1;
    keep[0] = NULL;
    got[0] = ~(uintptr_t)keep;
    lose();
    int reused = got[0] == were[0] && got[1] == were[1];
    printf("stale_reuse %s\n", reused ? "reused" : "not reused");
    return reused ? 0 : 77;
}
