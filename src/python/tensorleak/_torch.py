"""PyTorch lineage provider (torch 1.13 API).

add_tensor / saved_by_autograd describe storages at a report point;
wrap_copies (default mode) wraps the Python entry points that copy a tensor
into a new storage so each copy names its source; start_dispatch_mode (mode
"ops") records the creating op and source of every storage via a
TorchDispatchMode.
"""
import functools
import sys

from tensorleak import _agent

# Entry points that produce a new storage from a source (when they copy at
# all: x.contiguous() on contiguous x returns x itself; that is no copy).
COPY_METHODS = ("clone", "contiguous", "to", "repeat", "cpu", "float", "double", "half",
                "bfloat16", "int", "long", "short", "bool", "type", "repeat_interleave", "tile",
                "flatten", "reshape")
COPY_FUNCTIONS = ("tensor", "as_tensor", "clone", "tile", "repeat_interleave", "flatten",
                  "reshape")
# aten ops whose new output storage is a copy of their first input's
COPY_OPS = {"clone", "_to_copy", "copy", "copy_", "repeat", "contiguous", "_reshape_alias_copy",
            "repeat_interleave", "tile", "expand_copy", "_unsafe_view"}


def storage_of(t):
    """(base address, bytes) of a tensor's storage, or (0, 0)."""
    try:
        st = t.storage()
        return st.data_ptr(), st.nbytes()
    except Exception:
        return 0, 0


def add_tensor(storages, t, make, extent_fn, autograd=False):
    base, nbytes = storage_of(t)
    if not base:
        return
    s = storages.get(base)
    if s is None:
        s = storages[base] = make(nbytes)
    itemsize = t.element_size()
    lo, extent = extent_fn(t.shape, [st * itemsize for st in t.stride()], itemsize)
    offset = t.storage_offset() * itemsize + lo
    covers = offset <= 0 and offset + extent >= nbytes
    if autograd:
        s.autograd = True
    elif covers:
        s.full = True
    try:
        is_view = t._is_view()
    except Exception:
        is_view = False
    if is_view or not covers:
        op = None
        gf = getattr(t, "grad_fn", None)
        if gf is not None and is_view:
            op = type(gf).__name__.replace("Backward0", "").replace("Backward1", "").lower()
        s.views.append((max(offset, 0), extent, t.numel() * itemsize, t._cdata, autograd, op))


def saved_by_autograd(tensors):
    """Tensors saved for backward in the graphs of the given tensors."""
    out, seen, keep = [], set(), []
    stack = [t.grad_fn for t in tensors if getattr(t, "grad_fn", None) is not None]
    torch = sys.modules["torch"]
    while stack:
        node = stack.pop()
        # node wrappers are made on access: keep each alive so that its id
        # is not reused by the next one while the walk runs
        keep.append(node)
        if id(node) in seen:
            continue
        seen.add(id(node))
        leaf = getattr(node, "variable", None)  # AccumulateGrad: the leaf it feeds
        if isinstance(leaf, torch.Tensor):
            out.append(leaf)
        for name in dir(node):
            if not name.startswith("_saved_"):
                continue
            try:
                value = getattr(node, name)
            except Exception:  # freed by backward(), or not a tensor
                continue
            for v in value if isinstance(value, (tuple, list)) else (value,):
                if isinstance(v, torch.Tensor):
                    out.append(v)
        for nxt, _ in getattr(node, "next_functions", ()) or ():
            if nxt is not None:
                stack.append(nxt)
    return out


def _source_ptr(x):
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return storage_of(x)[0]
    np = sys.modules.get("numpy")
    if np is not None and isinstance(x, np.ndarray):
        from tensorleak import _numpy

        return _numpy.buffer_of(x)[0]
    return 0


def _note_copy(out, src, op):
    api = _agent.api()
    torch = sys.modules["torch"]
    if api is None or not isinstance(out, torch.Tensor):
        return
    dst, nbytes = storage_of(out)
    s = _source_ptr(src)
    if dst and s and dst != s:
        api.copy(dst, s, nbytes, op.encode())


def _wrap(owner, name, label):
    real = getattr(owner, name, None)
    if real is None or getattr(real, "_tensorleak_wrapped", False):
        return

    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        out = real(*args, **kwargs)
        if args:
            try:
                _note_copy(out, args[0], label)
            except Exception:
                pass
        return out

    wrapper._tensorleak_wrapped = True
    setattr(owner, name, wrapper)


def wrap_copies(torch):
    for name in COPY_METHODS:
        _wrap(torch.Tensor, name, name)
    for name in COPY_FUNCTIONS:
        _wrap(torch, name, name)


def start_dispatch_mode(torch):
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class LineageMode(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            api = _agent.api()
            if api is None:
                return out
            try:
                ins = [storage_of(t)[0] for t in tree_flatten((args, kwargs))[0]
                       if isinstance(t, torch.Tensor)]
                name = func.overloadpacket.__name__
                label = ("aten::" + name).encode()
                for t in tree_flatten(out)[0]:
                    if not isinstance(t, torch.Tensor):
                        continue
                    dst, nbytes = storage_of(t)
                    if not dst or dst in ins:
                        continue
                    if ins and ins[0] and name in COPY_OPS:
                        api.copy(dst, ins[0], nbytes, label)
                    else:
                        api.origin(dst, label)
            except Exception:
                pass
            return out

    mode = LineageMode()
    mode.__enter__()  # for the rest of the program
    sys.modules["tensorleak._torch"]._mode = mode
