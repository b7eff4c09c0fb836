/* check_ext.c - a C library a Python script calls through ctypes
 * (tests/integration/check_verdicts.sh): the blocks it keeps are allocated
 * in C under a Python line, so check's verdict shows both kinds of frames.
 */
#include <stdlib.h>

static void *volatile kept[16];
static int nkept;

/* Keep one malloc'd block of n bytes (lost after 16). */
__attribute__((noinline)) void check_ext_keep(size_t n)
{
    void *p = malloc(n);
    if (nkept < 16) kept[nkept++] = p;
}
