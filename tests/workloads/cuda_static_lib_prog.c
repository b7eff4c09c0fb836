/* cuda_static_lib_prog.c - a program that uses cuda_static_lib.c's library:
 * linked against it (no argument) or dlopen'ing it (argv[1], its path).
 * Prints "cuda_static_lib: N" with the library's cudaMalloc status. */
#include <dlfcn.h>
#include <stdio.h>

#ifdef LINKED
int kernels_run(void);
#endif

int main(int argc, char **argv)
{
    int (*run)(void) = NULL;
#ifdef LINKED
    run = kernels_run;
#endif
    if (argc > 1) {
        void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "cuda_static_lib: %s\n", dlerror());
            return 2;
        }
        *(void **)&run = dlsym(h, "kernels_run");
    }
    if (!run) return 3;
    printf("cuda_static_lib: %d\n", run());
    return 0;
}
