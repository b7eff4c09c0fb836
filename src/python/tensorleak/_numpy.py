"""numpy lineage provider: views through the .base chain, copies through
numpy's copying functions."""
import functools
import sys

from tensorleak import _agent

COPY_FUNCTIONS = ("array", "copy", "ascontiguousarray", "asfortranarray", "tile", "repeat")


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


def add_array(storages, a, make, extent_fn, min_bytes):
    k = kit()
    base, nbytes, owned = buffer_of(a, k)
    if not base:
        return
    s = storages.get(base)
    if s is None:
        if nbytes < min_bytes:
            return
        s = storages[base] = make(nbytes)
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
                src = args[0]
                sp = buffer_of(src)[0] if issubclass(type(src), np.ndarray) else 0
                if not sp and "torch" in sys.modules:
                    from tensorleak import _torch

                    sp = _torch._source_ptr(src)
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
