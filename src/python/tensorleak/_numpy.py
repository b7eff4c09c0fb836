"""numpy lineage provider: views through the .base chain, copies through
numpy's copying functions."""
import functools
import sys

from tensorleak import _agent

COPY_FUNCTIONS = ("array", "copy", "ascontiguousarray", "asfortranarray", "tile", "repeat")


def owner_of(a):
    np = sys.modules["numpy"]
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def buffer_of(a):
    """(base address, bytes) of the buffer under an ndarray."""
    o = owner_of(a)
    return o.__array_interface__["data"][0], o.nbytes


def add_array(storages, a, make, extent_fn, min_bytes):
    base, nbytes = buffer_of(a)
    if not base:
        return
    s = storages.get(base)
    if s is None:
        if nbytes < min_bytes:
            return
        s = storages[base] = make(nbytes)
    lo, extent = extent_fn(a.shape, a.strides, a.itemsize)
    offset = a.__array_interface__["data"][0] - base + lo
    covers = offset <= 0 and offset + extent >= s.nbytes
    if covers:
        s.full = True
    if a.base is not None or not covers:
        s.views.append((max(offset, 0), extent, a.nbytes, id(a), False, None))


def _wrap(np, name):
    real = getattr(np, name, None)
    if real is None or getattr(real, "_tensorleak_wrapped", False):
        return

    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        out = real(*args, **kwargs)
        try:
            api = _agent.api()
            if api is not None and args and isinstance(out, np.ndarray):
                src = args[0]
                sp = buffer_of(src)[0] if isinstance(src, np.ndarray) else 0
                if not sp and "torch" in sys.modules:
                    from tensorleak import _torch

                    sp = _torch._source_ptr(src)
                dp, nbytes = buffer_of(out)
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
