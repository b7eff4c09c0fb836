/* leak_kinds.c - one block of each leak kind at exit, with known bytes
 * (tests/integration/check_leak_kinds.sh):
 *   definitely lost   100 B (no pointer kept) and a list head of 64 B,
 *   indirectly lost   2 x 64 B (the list's other nodes, held by the lost head),
 *   possibly lost     300 B (only a pointer 16 bytes into it is kept),
 *   still reachable   200 B (a global pointer).
 * Built -O0; the pointers are made in a function of their own and its stack
 * is overwritten before main returns, so no stale copy reaches the scan.
 */
#include <stdlib.h>
#include <string.h>

struct node {
    struct node *next;
    char pad[56];
};

void *volatile keep_reachable; /* a root: the 200-byte block's start */
char *volatile keep_interior;  /* a root: 16 bytes into the 300-byte block */

__attribute__((noinline)) static void make(void)
{
    void *volatile lost = malloc(100);
    struct node *volatile head = malloc(sizeof *head);
    head->next = malloc(sizeof *head);
    head->next->next = malloc(sizeof *head);
    head->next->next->next = NULL;
    char *p = malloc(300);
    keep_interior = p + 16;
    keep_reachable = malloc(200);
    lost = NULL;
    head = NULL;
    (void)lost;
    (void)head;
}

__attribute__((noinline)) static void clobber(void)
{
    volatile char buf[262144];
    memset((char *)buf, 0, sizeof buf);
}

int main(void)
{
    make();
    clobber();
    return 0;
}
