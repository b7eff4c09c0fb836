/* numpy_copy.c - ndarray.copy() recorded as a copy (numpy_copy.h).
 *
 * The wrapper runs where numpy's method did, with the GIL held, and never
 * under our guard (numpy's buffer must be recorded by the wrapped handler,
 * and a subclass's __array_finalize__ is Python code). It only reads the
 * two arrays' data and base fields; errors and NULL results pass through.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/numpy_copy.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "agent/numpy.h"
#include "agent/record.h"
#include "agent/tsd.h"

static _Atomic(tl_numpy_copy_fn) record_copy_fn; /* tl_numpy_wrap_copy's */

/* CPython's PyMethodDef (Include/methodobject.h) and the flags handled. */
typedef struct py_method_def {
    const char *ml_name;
    void *ml_meth;
    int ml_flags;
    const char *ml_doc;
} py_method_def_t;
#define METH_FASTCALL_KEYWORDS (0x0080 | 0x0002)

typedef void *(*copy_fn)(void *self, void *const *args, intptr_t nargs, void *kwnames);

static copy_fn orig_copy;
static _Atomic(py_method_def_t *) wrapped_def;
static void *ndarray; /* PyArray_Type: base objects of this type are walked */

static void *field(const void *obj, size_t off)
{
    return *(void *const *)(const void *)((const char *)obj + off);
}

/* The data of the array at the end of a's .base chain of ndarrays (its
 * buffer's start when it owns it: the storage's base address). */
static const void *owner_data(const void *a)
{
    for (int hops = 0; hops < 64; hops++) {
        const void *base = field(a, TL_NP_ARRAY_BASE);
        if (!base || field(base, TL_NP_OB_TYPE) != ndarray) break;
        a = base;
    }
    return field(a, TL_NP_ARRAY_DATA);
}

/* ndarray.copy's C function, wrapped: numpy's result (or NULL and its
 * exception), with a COPY record when it has a new buffer of numpy's. */
static void *np_copy(void *self, void *const *args, intptr_t nargs, void *kwnames)
{
    tl_numpy_last_buffer_not = 0;
    void *out = orig_copy(self, args, nargs, kwnames);
    void *dst = out ? field(out, TL_NP_ARRAY_DATA) : NULL;
    if (!dst || (uintptr_t)dst != ~tl_numpy_last_buffer_not || tl_tsd.guard ||
        !tl_agent_recording())
        return out;
    const void *src = owner_data(self);
    tl_numpy_copy_fn rec = atomic_load_explicit(&record_copy_fn, memory_order_acquire);
    if (src && src != dst && rec) rec(dst, src, tl_numpy_last_bytes, "ndarray.copy");
    return out;
}

/* The "copy" entry of type's tp_methods (NULL-named end), or NULL. */
static py_method_def_t *find_copy(void *type, bool *bad)
{
    py_method_def_t *defs = NULL, d;
    char name[8];
    *bad = tl_numpy_peek(&defs, (char *)type + TL_NP_TP_METHODS, sizeof defs) || !defs;
    for (size_t i = 0; !*bad && i < 256; i++) {
        if (tl_numpy_peek(&d, &defs[i], sizeof d)) *bad = true;
        if (*bad || !d.ml_name) break;
        if (!tl_numpy_peek(name, d.ml_name, 5) && !memcmp(name, "copy", 5)) return &defs[i];
    }
    return NULL;
}

int tl_numpy_wrap_copy(void *type, tl_numpy_copy_fn record_copy)
{
    atomic_store_explicit(&record_copy_fn, record_copy, memory_order_release);
    bool bad;
    py_method_def_t *def = type ? find_copy(type, &bad) : NULL, now;
    if (!type || bad) return -EINVAL;
    if (!def || tl_numpy_peek(&now, def, sizeof now) || now.ml_flags != METH_FASTCALL_KEYWORDS ||
        !now.ml_meth)
        return 0; /* another convention: copies name no source */
    if (atomic_load(&wrapped_def)) return 0;
    if (tl_numpy_poke(&def->ml_meth, &now.ml_meth, sizeof now.ml_meth)) return -EFAULT;
    orig_copy = (copy_fn)now.ml_meth;
    ndarray = type;
    py_method_def_t *none = NULL;
    if (!atomic_compare_exchange_strong(&wrapped_def, &none, def)) return 0;
    __atomic_store_n((copy_fn *)(void *)&def->ml_meth, np_copy, __ATOMIC_RELEASE);
    return 0;
}

void tl_numpy_copy_reset(void)
{
    py_method_def_t *def = atomic_exchange(&wrapped_def, NULL);
    if (def) def->ml_meth = (void *)orig_copy;
}
