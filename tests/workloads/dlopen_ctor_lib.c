/* dlopen_ctor_lib.c - a library whose constructor leaks 5000 bytes each
 * time it is loaded (tests/integration/check_dlopen_loop.sh). */
#include <stdlib.h>

static void *volatile sink;

__attribute__((constructor)) static void ctor_leak(void)
{
    sink = malloc(5000); /* lost at dlclose: nothing outside the library holds it */
    sink = NULL;
}
