"""What holds each live storage at a report point.

Walks the objects reachable from the program's own modules (the __main__
script and modules outside the Python installation) without entering other
modules, classes or tensors, collects the tensors and ndarrays found, and
reports to the agent, per storage: whether a reachable tensor covers all of
it ("tensor"), only views of part of it ("view"), or only autograd graphs
hanging off reachable tensors ("autograd"); and every view with its byte
offset, extent and numel x itemsize bytes.
"""
import gc
import os
import sys
import sysconfig
import types

from tensorleak import _agent

NUMPY_MIN_STORAGE = 65536  # numpy buffers below this are not storages (docs/report-schema.md)


def _library_prefixes():
    out = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            out.add(os.path.realpath(p))
    for p in sys.path:
        if p and ("dist-packages" in p or "site-packages" in p):
            out.add(os.path.realpath(p))
    out.add(os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    return tuple(out)


def _roots():
    prefixes = _library_prefixes()
    roots = []
    for name, mod in list(sys.modules.items()):
        d = getattr(mod, "__dict__", None)
        if d is None:
            continue
        if name == "__main__":
            roots.append(d)
            continue
        f = getattr(mod, "__file__", None)
        if not f or name.startswith("tensorleak"):
            continue
        real = os.path.realpath(f)
        if not real.startswith(prefixes):
            roots.append(d)
    return roots


def reachable(tensor_type, array_type, extra_roots=()):
    """Tensors and arrays reachable from the program's own module globals
    (and from extra_roots: the live frames at an os_exit end point)."""
    module_dicts = {id(getattr(m, "__dict__", None)) for m in list(sys.modules.values())}
    roots = _roots() + list(extra_roots)
    seen = {id(r) for r in roots}
    seen.add(id(sys._getframe().f_locals))
    stack = list(roots)
    tensors, arrays = [], []
    leaf = (str, bytes, bytearray, int, float, complex, bool, type(None), types.ModuleType, type,
            types.BuiltinFunctionType, types.CodeType)
    while stack:
        obj = stack.pop()
        for ref in gc.get_referents(obj):
            i = id(ref)
            if i in seen:
                continue
            seen.add(i)
            if tensor_type is not None and isinstance(ref, tensor_type):
                tensors.append(ref)
                continue
            if array_type is not None and isinstance(ref, array_type):
                arrays.append(ref)
                continue
            if isinstance(ref, leaf) or (isinstance(ref, dict) and i in module_dicts):
                continue
            stack.append(ref)
    return tensors, arrays


class _Storage:
    __slots__ = ("nbytes", "full", "views", "autograd")

    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.full = False
        self.views = []
        self.autograd = False


def _extent(shape, strides, itemsize):
    """(lowest byte offset, extent in bytes) the strides can address."""
    lo = hi = 0
    for n, st in zip(shape, strides):
        if n == 0:
            return 0, 0
        step = (n - 1) * st
        if step < 0:
            lo += step
        else:
            hi += step
    return lo, hi - lo + itemsize


def describe(api, snap, extra_roots=()):
    torch = sys.modules.get("torch")
    np = sys.modules.get("numpy")
    tensor_type = getattr(torch, "Tensor", None) if torch else None
    array_type = getattr(np, "ndarray", None) if np else None
    if tensor_type is None and array_type is None:
        return
    tensors, arrays = reachable(tensor_type, array_type, extra_roots)
    storages = {}
    if tensor_type is not None:
        from tensorleak import _torch

        for t in tensors:
            _torch.add_tensor(storages, t, _Storage, _extent)
        for t in _torch.saved_by_autograd(tensors):
            _torch.add_tensor(storages, t, _Storage, _extent, autograd=True)
    if array_type is not None:
        from tensorleak import _numpy

        for a in arrays:
            _numpy.add_array(storages, a, _Storage, _extent, NUMPY_MIN_STORAGE)
    for base, s in storages.items():
        if s.full:
            held = _agent.HELD_TENSOR
        elif s.views and not all(v[4] for v in s.views):
            held = _agent.HELD_VIEW
        elif s.autograd:
            held = _agent.HELD_AUTOGRAD
        else:
            held = _agent.HELD_UNKNOWN
        api.snapshot_hold(snap, base, s.nbytes, held, None)
        for offset, extent, nbytes, obj, via_autograd, op in s.views:
            if via_autograd:
                continue
            api.snapshot_view(snap, base, offset, extent, nbytes, obj,
                              op.encode() if op else None)
