/* numpy_copy.h - ndarray.copy() as a copy with its source.
 *
 * numpy's ndarray.copy is a C method (array_copy): no Python wrapper can
 * see it, so the agent rewrites the ml_meth of its PyMethodDef (numpy's
 * static table, read through PyArray_Type's tp_methods) to a wrapper that
 * calls numpy's function and, when the result's data is the numpy buffer
 * just allocated on this thread, writes a COPY record (op "ndarray.copy")
 * from the source's owner buffer to it (docs/python.md, "numpy storages").
 */
#ifndef TL_AGENT_NUMPY_COPY_H
#define TL_AGENT_NUMPY_COPY_H

#include <stddef.h>

/* CPython's PyTypeObject.tp_methods (Include/cpython/object.h, the same in
 * 3.8-3.13, default builds; the Python package checks the type's layout
 * before it passes the type: tensorleak/_numpy.py). */
#define TL_NP_TP_METHODS 232

/* numpy's PyArrayObject_fields (numpy/ndarraytypes.h, the same in numpy
 * 1.22 to 2.4): byte offsets of data and base. */
#define TL_NP_ARRAY_DATA 16
#define TL_NP_ARRAY_BASE 48

/* Wrap ndarray.copy of type (numpy's PyArray_Type, whose tp_alloc and
 * tp_free numpy.h wraps): 0 when wrapped (now or before) or when its
 * method is not of the one calling convention handled (METH_FASTCALL |
 * METH_KEYWORDS: numpy 1.22 to 2.4), so that copies simply name no source;
 * -EINVAL when the table cannot be read, -EFAULT when it cannot be
 * written. Call with the GIL held. Never undone but by tl_numpy_copy_reset.
 * record_copy writes a copy's COPY record (the lineage API's copy, given
 * by api.c, which is above this module: dst and src storages, bytes, op). */
typedef void (*tl_numpy_copy_fn)(const void *dst, const void *src, size_t bytes, const char *op);
int tl_numpy_wrap_copy(void *type, tl_numpy_copy_fn record_copy);

/* Put numpy's function back (the unit tests' reset). */
void tl_numpy_copy_reset(void);

#endif /* TL_AGENT_NUMPY_COPY_H */
