/* pyframes_embed.c - a program that embeds CPython by dlopen'ing its
 * libpython after start (RTLD_GLOBAL), for tests/integration/pyframes_embed.sh:
 * the agent finds that interpreter late, at a module rescan.
 * Usage: pyframes_embed LIBPYTHON CODE. Runs CODE (PyRun_SimpleString) and
 * exits 0, or 1 when it raised, 2 when the library cannot be used.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        fprintf(stderr, "pyframes_embed: %s\n", dlerror());
        return 2;
    }
    void (*init)(void);
    int (*run)(const char *);
    int (*fin)(void);
    *(void **)&init = dlsym(h, "Py_Initialize");
    *(void **)&run = dlsym(h, "PyRun_SimpleString");
    *(void **)&fin = dlsym(h, "Py_FinalizeEx");
    if (!init || !run || !fin) return 2;
    init();
    int rc = run(argv[2]);
    fin();
    return rc ? 1 : 0;
}
