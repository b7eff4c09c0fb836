/* dlopen_loop.c LIB N - dlopen and dlclose LIB N times (its constructor
 * leaks 5000 bytes per load: tests/workloads/dlopen_ctor_lib.c), or, with
 * N = 1, load it once and keep it. Issue 28 item 5. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    long n = strtol(argv[2], NULL, 10);
    for (long i = 0; i < n; i++) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "%s\n", dlerror());
            return 1;
        }
        if (n > 1) dlclose(h);
    }
    return 0;
}
