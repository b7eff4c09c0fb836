/* leak_kinds.c - one block of each leak kind at exit, with known bytes
 * (tests/integration/check_leak_kinds.sh):
 *   definitely lost   100 B (no pointer kept) and a list head of 64 B,
 *   indirectly lost   2 x 64 B (the list's other nodes, held by the lost head),
 *   possibly lost     300 B (only a pointer 16 bytes into it is kept),
 *   still reachable   200 B (a global pointer).
 * The pointers are made in a function of their own and its stack
 * is overwritten before main returns, so no stale copy reaches the scan.
 */
#include <stddef.h>
#include <stdlib.h>

struct node {
    struct node *next;
    char pad[56];
};

void *volatile keep_reachable; /* a root: the 200-byte block's start */
char *volatile keep_interior;  /* a root: 16 bytes into the 300-byte block */
void *volatile lost;           /* roots only while make() runs */
struct node *volatile head;

__attribute__((noinline)) static void make(void)
{
    /* through volatile globals: the compiler cannot drop the stores into
     * the nodes (it would, at -O2, for a list nothing reads) */
    lost = malloc(100);
    head = malloc(sizeof *head);
    head->next = malloc(sizeof *head);
    head->next->next = malloc(sizeof *head);
    head->next->next->next = NULL;
    char *p = malloc(300);
    keep_interior = p + 16;
    keep_reachable = malloc(200);
    lost = NULL;
    head = NULL;
}

__attribute__((noinline)) static void clobber(void)
{
    volatile unsigned long buf[8192]; /* volatile stores: not dead, whatever the -O */
    for (size_t i = 0; i < sizeof buf / sizeof buf[0]; i++)
        buf[i] = 0;
}

int main(void)
{
    make();
    clobber();
    return 0;
}
