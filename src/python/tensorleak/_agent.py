"""ctypes binding of the agent's entry table (include/tensorleak.h).

The table is looked up once in the running process; None when the agent is
not loaded. Field order must match struct tl_agent_api exactly.
"""
import array
import ctypes

API_VERSION = 6

HELD_UNKNOWN, HELD_TENSOR, HELD_VIEW, HELD_AUTOGRAD, HELD_CYCLE = 0, 1, 2, 3, 4
# TL_CAUSE_* (src/common/trace_format.h): the kind of holder on a path
(CAUSE_NONE, CAUSE_CYCLE, CAUSE_CACHE, CAUSE_TRACEBACK, CAUSE_CLOSURE, CAUSE_OPTIMIZER,
 CAUSE_THREAD, CAUSE_CLASS) = range(8)
COVERED_UNKNOWN = ctypes.c_size_t(-1).value

_p, _s, _u64, _int = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_int
_str = ctypes.c_char_p
_F = ctypes.CFUNCTYPE


class _Api(ctypes.Structure):
    _fields_ = [
        ("version", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("storage_register", _F(None, _p, _s, _str)),
        ("storage_unregister", _F(None, _p)),
        ("view_begin", _F(None, _p, _p, _s, _s, _s, _str)),
        ("view_end", _F(None, _p)),
        ("copy", _F(None, _p, _p, _s, _str)),
        ("origin", _F(None, _p, _str)),
        ("tag", _F(None, _p, _str)),
        ("region_begin", _F(None, _str)),
        ("region_end", _F(None, _str)),
        ("snapshot_begin", _F(_u64, _str)),
        ("snapshot_hold", _F(None, _u64, _p, _s, _int, _p)),
        ("snapshot_view", _F(None, _u64, _p, _s, _s, _s, _p, _str)),
        ("snapshot_end", _F(None, _u64)),
        ("trace_path", _F(ctypes.c_char_p)),
        ("note", _F(None, _u64, _str)),
        ("snapshot_why", _F(None, _u64, _p, _s, _int, _str)),
        # version 2: CUDA storages from an allocator history (_cuda.py)
        ("frame", _F(_u64, _str, _str, ctypes.c_uint32)),
        ("stack", _F(_u64, ctypes.POINTER(_u64), _s)),
        ("device_alloc", _F(None, _int, _int, _u64, _p, _s, _u64, _u64)),
        ("device_free", _F(None, _int, _int, _p, _u64)),
        # version 3: numpy's default data-memory handler wrapped (_numpy.py)
        ("numpy_handler", _F(_int, _p, _p)),
        # version 4: C++ news in full only of a TensorImpl's size (_boot.py)
        ("view_object", _F(_int, _p)),
        ("numpy_storages", _F(_u64)),
        # version 5: which host storages are live (_holders.py)
        ("storages_live", _F(ctypes.c_int64, ctypes.POINTER(_u64), _s, ctypes.POINTER(ctypes.c_uint8))),
        # version 6: a live host storage's allocation site (_shm.py)
        ("storage_stack", _F(_u64, _p)),
    ]


class _Table:
    """The agent's table, each entry read from the structure once: ctypes
    makes a new function object at every read of a structure's function
    field and keeps the latest in the structure (its _objects), so each
    report point left a few blocks live (a pytest test's region counted
    them: 3.4 KiB in every test)."""

    def __init__(self, struct):
        self._struct = struct

    def __getattr__(self, name):  # the first read of an entry
        value = getattr(self._struct, name)
        setattr(self, name, value)
        return value


_api = None
_looked = False


def api():
    """The agent's table (a _Table over its ctypes structure), or None
    without the agent."""
    global _api, _looked
    if not _looked:
        _looked = True
        try:
            fn = ctypes.CDLL(None).tensorleak_agent_api
        except (AttributeError, OSError):
            return None
        fn.restype = ctypes.POINTER(_Api)
        fn.argtypes = [ctypes.c_uint32]
        ptr = fn(API_VERSION)
        if ptr:
            _api = _Table(ptr.contents)
    return _api


def has(a, field):
    """Does the agent's table `a` have `field` (its size covers it)?"""
    f = getattr(_Api, field)
    return a.size >= f.offset + f.size


def storages_live(a, bases):
    """(live, found): how many host storages the agent recorded are live now
    (all of them; -1 when it does not know, or has no storages_live entry)
    and the set of those among bases (ints, distinct) that are such
    storages, by base address. Never raises."""
    try:
        if a is None or not has(a, "storages_live"):
            return -1, set()
        # arrays of the array module, not ctypes's (_u64 * n): ctypes makes
        # and keeps a new array type (~860 B) for each n, which a pytest
        # test's region counted as the test's
        ptrs = array.array("Q", bases)
        n = len(ptrs)
        live = array.array("B", bytes(n))
        total = a.storages_live(ctypes.cast(ptrs.buffer_info()[0], ctypes.POINTER(_u64)), n,
                                ctypes.cast(live.buffer_info()[0], ctypes.POINTER(ctypes.c_uint8)))
        bases = ptrs
    except Exception:  # a base that is no address, a table without the entry
        return -1, set()
    if total < 0:
        return -1, set()
    return total, {b for b, yes in zip(bases, live) if yes}


def note(text, snap=0):
    """Puts a note for the report into the trace (NOTE record), about report
    point `snap` (0: none). Never raises; without the agent it does nothing:
    the program's own stderr is not ours to write on."""
    try:
        a = api()
        if a is not None and has(a, "note"):
            a.note(snap, str(text).encode("utf-8", "replace")[:255])
    except Exception:
        pass


def trace_path():
    """This process's trace file, or None."""
    a = api()
    if a is None or not has(a, "trace_path"):
        return None
    p = a.trace_path()
    return p.decode("utf-8", "surrogateescape") if p else None
