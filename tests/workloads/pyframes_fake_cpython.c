/* pyframes_fake_cpython.c - a C program that looks like a CPython the
 * agent must not read, for tests/integration/pyframes_unsupported.sh.
 * Built in variants (tests/agent.mk, linked with --export-dynamic so the
 * agent's dlsym finds these): FAKE_HEX = Py_Version (absent: only
 * Py_GetVersion, as before 3.11), FAKE_VERSION = PY_VERSION, FAKE_DEBUG
 * (_Py_NegativeRefcount: a Py_REF_DEBUG build), FAKE_FREE_THREADED
 * (_Py_MergeZeroLocalRefcount), FAKE_TYPE_OK (a PyType_Type that is its
 * own type, as in a default build). Prints "fake PTR" for its 300001-byte
 * allocation and exits 0.
 */
#include <stdio.h>
#include <stdlib.h>

#ifdef FAKE_HEX
const unsigned long Py_Version = FAKE_HEX;
#endif

const char *Py_GetVersion(void);
const char *Py_GetVersion(void)
{
    return FAKE_VERSION " (fake, for tensorleak's tests) [no compiler]";
}

#ifdef FAKE_DEBUG
void _Py_NegativeRefcount(void);
void _Py_NegativeRefcount(void) {}
#endif
#ifdef FAKE_FREE_THREADED
void _Py_MergeZeroLocalRefcount(void);
void _Py_MergeZeroLocalRefcount(void) {}
#endif
#ifdef FAKE_TYPE_OK
/* ob_refcnt, ob_type: the object header of a default build. */
struct fake_type {
    long refcnt;
    const void *type;
};
extern struct fake_type PyType_Type;
struct fake_type PyType_Type = {1, &PyType_Type};
#endif

int main(void)
{
    char *p = malloc(300001);
    if (!p) return 1;
    p[0] = 1;
    printf("fake %p\n", (void *)p);
    free(p);
    return 0;
}
