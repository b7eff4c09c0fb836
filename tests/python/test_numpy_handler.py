"""test_numpy_handler.py - unit test of tensorleak._numpy's look-up of
numpy's default data-memory handler in its C-API table (_handler_of), on
stand-in tables: a numpy older than 1.22 (feature version below 0x0f) and a
table whose slots do not agree are refused with a reason, never called
past slot 211. Run by tests/integration/numpy_handler.sh; needs no numpy."""
import ctypes
import sys

from tensorleak import _numpy

py = ctypes.pythonapi
py.PyCapsule_New.restype = ctypes.py_object
py.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeUmath:
    """A module-like object with an _ARRAY_API capsule over table."""

    def __init__(self, table):
        self._ARRAY_API = py.PyCapsule_New(ctypes.addressof(table), None, None)


def table_of(feature, get_handler=None):
    table = (ctypes.c_void_p * 400)()
    keep = [ctypes.CFUNCTYPE(ctypes.c_uint)(lambda: feature)]
    table[_numpy.SLOT_FEATURE_VERSION] = ctypes.cast(keep[0], ctypes.c_void_p).value
    if get_handler is not None:
        keep.append(ctypes.PYFUNCTYPE(ctypes.py_object)(get_handler))
        table[_numpy.SLOT_GET_HANDLER] = ctypes.cast(keep[1], ctypes.c_void_p).value
    return table, keep


def refused(umath, want):
    try:
        _numpy._handler_of(umath)
    except ValueError as exc:
        if want not in str(exc):
            print(f"FAIL: refused with {exc!r}, want {want!r}")
            sys.exit(1)
        return
    print(f"FAIL: accepted, want refused with {want!r}")
    sys.exit(1)


old, keep_old = table_of(0x0E)  # numpy 1.21's C API: slots 304-306 do not exist
refused(FakeUmath(old), "has no data-memory handler (numpy < 1.22)")
# a default-handler slot that PyDataMem_GetHandler in a fresh context disagrees with
default = py.PyCapsule_New(ctypes.addressof(old), b"mem_handler", None)
holder = ctypes.py_object(default)
odd, keep_odd = table_of(0x10, lambda: py.PyCapsule_New(ctypes.addressof(old), b"mem_handler", None))
odd[_numpy.SLOT_DEFAULT_HANDLER] = ctypes.addressof(holder)
refused(FakeUmath(odd), "default handler not found")
not_capsule = FakeUmath(old)
not_capsule._ARRAY_API = object()
refused(not_capsule, "not numpy's C-API capsule")
print("test_numpy_handler: ok")
