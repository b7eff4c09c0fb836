"""numpy provider: its data buffers as storages through numpy's own
data-memory handler (NEP 49), views through the .base chain, copies through
numpy's copying functions."""
import ctypes
import functools
import os
import sys

from tensorleak import _agent, _buffers

COPY_FUNCTIONS = ("array", "copy", "ascontiguousarray", "asfortranarray", "tile", "repeat")

# numpy's C-API table (the _ARRAY_API capsule of _multiarray_umath): slot
# numbers from numpy_api.py, the same in numpy 1.22 to 2.4 (checked in the
# installed numpy/__multiarray_api.h of 1.24.2 and 2.4.6).
SLOT_FEATURE_VERSION = 211  # unsigned PyArray_GetNDArrayCFeatureVersion(void), numpy >= 1.4
SLOT_SET_HANDLER = 304  # PyObject *PyDataMem_SetHandler(PyObject *handler): the old one
SLOT_GET_HANDLER = 305  # PyObject *PyDataMem_GetHandler(void)
SLOT_DEFAULT_HANDLER = 306  # PyObject **: &PyDataMem_DefaultHandler
FEATURE_1_22 = 0x0F  # NPY_1_22_API_VERSION: the first with a handler (slots 304-306)
HEAP_MIN_STORAGE = 65536  # without the handler: smaller buffers are not storages (report-schema.md)

# Where numpy's extension lives: numpy 1.x, numpy 2.x.
UMATH_MODULES = ("numpy.core._multiarray_umath", "numpy._core._multiarray_umath")

handler_wrapped = False  # numpy's default handler records our storages
# PyDataMem_Handler (numpy/ndarraytypes.h, version 1): char name[127], uint8
# version, then PyDataMemAllocator {ctx, malloc, calloc, realloc, free}
HANDLER_BYTES = 128 + 5 * 8
_plain = None  # (capsule, its struct, its name, SetHandler): numpy's handler as it was


def min_storage():
    """Bytes below which a numpy buffer is no storage at a report point."""
    return 0 if handler_wrapped else HEAP_MIN_STORAGE


def _keep_plain(umath, handler):
    """Keeps a copy of numpy's default handler (the struct at address
    handler) as it is before the agent wraps it, in a capsule of its own,
    for numpy's imports after its first (plain_import)."""
    global _plain
    py = ctypes.pythonapi
    struct = ctypes.create_string_buffer(HANDLER_BYTES)
    ctypes.memmove(struct, handler, HANDLER_BYTES)
    name = ctypes.create_string_buffer(b"mem_handler")
    py.PyCapsule_New.restype = ctypes.py_object
    py.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
    cap = py.PyCapsule_New(ctypes.addressof(struct), ctypes.addressof(name), None)
    table = ctypes.cast(py.PyCapsule_GetPointer(umath._ARRAY_API, None), ctypes.POINTER(ctypes.c_void_p))
    setter = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(table[SLOT_SET_HANDLER])
    _plain = (cap, struct, name, setter)


def plain_import(name):
    """(before, after) to run around the import of numpy's module `name`
    once numpy's handler is wrapped (numpy.random, numpy.fft imported on
    first use, torch 2.x's dynamo does at optimizer creation): the buffers
    it makes are numpy's constants, plain blocks as those of numpy's own
    import are, so the import's context allocates through the handler's
    copy from before the wrap (an array frees through the handler it was
    made with: those buffers stay plain). None for other modules."""
    if not handler_wrapped or _plain is None or not name.startswith("numpy."):
        return None
    setter = _plain[3]

    def before():
        try:
            return (setter(_plain[0]),)
        except Exception:
            return None

    def after(token):
        if token is not None:
            try:
                setter(token[0])
            except Exception:
                pass

    return before, after


def _handler_of(umath):
    """The address of numpy's default PyDataMem_Handler, from the C-API
    table of the extension module umath; raises ValueError when numpy has
    none (older than 1.22) or the table does not agree with itself."""
    py = ctypes.pythonapi
    py.PyCapsule_GetPointer.restype = ctypes.c_void_p
    py.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    py.PyCapsule_IsValid.restype = ctypes.c_int
    py.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]
    cap = umath._ARRAY_API
    if not py.PyCapsule_IsValid(cap, None):
        raise ValueError("_ARRAY_API is not numpy's C-API capsule")
    table = ctypes.cast(py.PyCapsule_GetPointer(cap, None), ctypes.POINTER(ctypes.c_void_p))
    feature = ctypes.CFUNCTYPE(ctypes.c_uint)(table[SLOT_FEATURE_VERSION])()
    if feature < FEATURE_1_22:
        raise ValueError(f"numpy C API {feature:#x} has no data-memory handler (numpy < 1.22)")
    default = ctypes.cast(table[SLOT_DEFAULT_HANDLER], ctypes.POINTER(ctypes.py_object))[0]
    # In a fresh context numpy's ContextVar holds no value: its handler is
    # the default one, whatever the program set in its own contexts.
    import contextvars

    get = ctypes.PYFUNCTYPE(ctypes.py_object)(table[SLOT_GET_HANDLER])
    if contextvars.Context().run(get) is not default or not py.PyCapsule_IsValid(
            default, b"mem_handler"):
        raise ValueError("numpy's default handler not found in its C-API table")
    return py.PyCapsule_GetPointer(default, b"mem_handler")


# CPython's PyTypeObject: byte offsets of fields checked against the running
# interpreter before numpy's ndarray type is handed to the agent
# (src/agent/numpy.h): the same in CPython 3.8-3.13 (default builds).
TP_BASICSIZE, TP_FLAGS, TP_ALLOC, TP_FREE = 32, 168, 304, 320


def _array_type(np_ndarray):
    """The address of ndarray's PyTypeObject when its layout is the one the
    agent knows and its tp_alloc / tp_free are CPython's own (so ours can
    call them); else None (views then name no line)."""
    import sys as _sys

    if getattr(_sys, "_is_gil_enabled", lambda: True)() is False:
        return None  # a free-threaded build: another object header
    addr = id(np_ndarray)
    word = lambda off: ctypes.c_void_p.from_address(addr + off).value or 0
    py = ctypes.pythonapi
    generic = ctypes.cast(py.PyType_GenericAlloc, ctypes.c_void_p).value
    obj_free = ctypes.cast(py.PyObject_Free, ctypes.c_void_p).value
    if (word(TP_BASICSIZE) != np_ndarray.__basicsize__ or word(TP_FLAGS) != np_ndarray.__flags__
            or word(TP_ALLOC) != generic or word(TP_FREE) != obj_free):
        return None
    return addr


def _umath():
    """numpy's extension module (not numpy 2's numpy.core shim), or None."""
    for name in UMATH_MODULES[::-1]:
        m = sys.modules.get(name)
        spec = getattr(m, "__spec__", None)
        if m is not None and "_ARRAY_API" in vars(m) and getattr(spec, "origin", "").endswith(".so"):
            return m
    return None


def wrap_handler():
    """Wraps numpy's default data-memory handler in the agent, so every data
    buffer numpy allocates from now on, in any thread or context, is a
    storage with its stack (docs/python.md). Otherwise a note says why and
    the report falls back to its size rule."""
    global handler_wrapped
    api = _agent.api()
    if api is None or handler_wrapped:
        return
    why = None
    umath = _umath()
    if not _agent.has(api, "numpy_handler"):
        why = "the agent has no numpy_handler entry"
    elif umath is None:
        why = "numpy's _multiarray_umath extension not found"
    else:
        try:
            views = os.environ.get("TENSORLEAK_NUMPY_VIEW_LINES", "1") != "0"
            handler = _handler_of(umath)
            try:
                _keep_plain(umath, handler)
            except Exception:  # numpy's later imports then make storages
                pass
            rc = api.numpy_handler(handler, _array_type(umath.ndarray) if views else None)
            if rc:
                why = f"the agent refused numpy's handler (error {-rc})"
        except Exception as exc:
            why = f"{type(exc).__name__}: {exc}"
    if why is None:
        handler_wrapped = True
        return
    _agent.note(f"numpy's allocation hook not installed ({why}); numpy buffers of 64 KiB or "
                f"more are storages by their allocation site"[:250])


class _Kit:
    """ndarray's own accessors (a subclass's properties are not run)."""

    def __init__(self, np):
        nd = np.ndarray
        self.np, self.ndarray = np, nd
        self.base, self.nbytes = nd.base.__get__, nd.nbytes.__get__
        self.flags, self.interface = nd.flags.__get__, nd.__array_interface__.__get__
        self.shape, self.strides, self.itemsize = nd.shape.__get__, nd.strides.__get__, nd.itemsize.__get__


_kits = {}


def kit():
    np = sys.modules["numpy"]
    k = _kits.get(id(np))
    if k is None or k.np is not np:
        k = _kits[id(np)] = _Kit(np)
    return k


def owner_of(a, k=None):
    """The ndarray at the end of a's .base chain of ndarrays."""
    k = k or kit()
    base = k.base(a)
    while issubclass(type(base), k.ndarray):
        a, base = base, k.base(base)
    return a


def buffer_of(a, k=None):
    """(base address, bytes, allocated by numpy) of the buffer under an
    ndarray. numpy allocated it (with its data allocator, malloc unless the
    program set another) when the owner holds its own data; otherwise it is
    foreign memory (a memmap's file, a bytes object, another library's)."""
    k = k or kit()
    o = owner_of(a, k)
    return k.interface(o)["data"][0], k.nbytes(o), bool(k.flags(o).owndata)


_buffers.provide("numpy", "ndarray", lambda a: buffer_of(a)[0])


def _shm_segment_of(addr):
    shm = sys.modules.get("tensorleak._shm")
    return shm.segment_of(addr) if shm is not None and shm.segments else None


def add_array(storages, a, make, extent_fn, min_bytes):
    k = kit()
    base, nbytes, owned = buffer_of(a, k)
    if not base:
        return
    seg = None if owned else _shm_segment_of(base)
    if seg:  # over a multiprocessing.shared_memory mapping: a view of it
        base, nbytes = seg
    s = storages.get(base)
    if s is None:
        if nbytes < min_bytes:
            return
        s = storages[base] = make(nbytes)
    s.shm = s.shm or bool(seg)
    s.fingerprint = s.fingerprint or owned
    lo, extent = extent_fn(k.shape(a), k.strides(a), k.itemsize(a))
    first = k.interface(a)["data"][0] - base
    s.geoms.append((first, k.shape(a), k.strides(a), k.itemsize(a)))
    offset = first + lo
    covers = offset <= 0 and offset + extent >= s.nbytes
    if covers:
        s.full = True
    if k.base(a) is not None or not covers:
        s.views.append((max(offset, 0), extent, k.nbytes(a), id(a), False, None))


def _wrap(np, name):
    real = getattr(np, name, None)
    if real is None or getattr(real, "_tensorleak_wrapped", False):
        return

    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        out = real(*args, **kwargs)
        try:
            api = _agent.api()
            if api is not None and args and issubclass(type(out), np.ndarray):
                sp = _buffers.base_of(args[0])
                dp, nbytes, _ = buffer_of(out)
                if sp and dp and sp != dp:
                    api.copy(dp, sp, nbytes, ("numpy." + name).encode())
        except Exception:
            pass
        return out

    wrapper._tensorleak_wrapped = True
    setattr(np, name, wrapper)


def wrap_copies(np):
    for name in COPY_FUNCTIONS:
        _wrap(np, name)
