"""PyTorch lineage provider (torch 1.13 and 2.x APIs).

add_tensor / saved_by_autograd describe storages at a report point;
wrap_copies (default mode) wraps the Python entry points that copy a tensor
into a new storage so each copy names its source; start_dispatch_mode (mode
"ops") records the creating op and source of every storage via a
TorchDispatchMode.

Rules: a tensor is described only when it is a dense (strided) CPU or CUDA
tensor of torch.Tensor itself or of a subclass that keeps torch's own
__torch_function__ and __torch_dispatch__; every other kind (other devices,
meta, sparse, quantized, nested, mkldnn tensors, wrapper subclasses) is
skipped and named in a note. A CUDA tensor's storage is described from its
metadata only (data_ptr, nbytes, strides: host memory of torch's), never by
reading device memory: it is never offered for fingerprinting, so CUDA
storages have no duplicates. Its bytes are offered for fingerprinting only when torch
says its CPU allocator owns them (a resizable storage, torch >= 2.0; on 1.13,
which cannot tell, the agent's own page check guards), or when the agent
recorded the storage itself (_holders.describe asks: torch.load's are not
resizable on 2.x). Everything is called
through torch's C base class, so no code of a subclass runs, and through APIs
that warn in no torch version (untyped_storage on 2.x: Tensor.storage() warns
there).
"""
import _thread
import functools
import sys

from tensorleak import _agent, _buffers, _hookguard

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


class _Kit:
    """torch's C-level accessors, looked up once per torch module object (a
    second import of torch is another module and gets its own kit)."""

    def __init__(self, torch):
        C = torch._C
        tb = getattr(C, "TensorBase", None) or C._TensorBase
        self.torch = torch
        self.tensor = torch.Tensor
        self.storage = getattr(tb, "untyped_storage", None) or tb._storage  # 2.x / 1.13
        self.device = tb.device.__get__
        self.layout = tb.layout.__get__
        self.is_quantized = tb.is_quantized.__get__
        nested = getattr(tb, "is_nested", None)
        self.is_nested = nested.__get__ if nested is not None else (lambda t: False)
        self.grad_fn = tb.grad_fn.__get__
        self.cdata = tb._cdata.__get__
        self.shape = tb.shape.__get__
        self.element_size, self.stride = tb.element_size, tb.stride
        self.storage_offset, self.numel, self.is_view = tb.storage_offset, tb.numel, tb._is_view
        self.tb_is_contiguous = tb.is_contiguous
        self.strided = torch.strided
        self.plain_tf = {getattr(C, "_disabled_torch_function_impl", None)}
        self.plain_td = {getattr(C, "_disabled_torch_dispatch_impl", None)}
        self.plain_ok = {}

    def plain(self, cls):
        """Is cls torch.Tensor, or a subclass whose own classes define no
        __torch_function__ / __torch_dispatch__ of their own?"""
        ok = self.plain_ok.get(cls)
        if ok is None:
            ok = True
            for k in type.__dict__["__mro__"].__get__(cls):
                if k is self.tensor:
                    break
                d = type.__dict__["__dict__"].__get__(k)
                tf, td = d.get("__torch_function__"), d.get("__torch_dispatch__")
                if (tf is not None and tf not in self.plain_tf) or (
                        td is not None and td not in self.plain_td):
                    ok = False
                    break
            self.plain_ok[cls] = ok
        return ok


_kits = {}


def kit(torch=None):
    """The _Kit of the torch module in sys.modules (or of `torch`)."""
    torch = torch or sys.modules["torch"]
    k = _kits.get(id(torch))
    if k is None or k.torch is not torch:
        k = _kits[id(torch)] = _Kit(torch)
    return k


def skip_reason(t, k):
    """Why tensor t is not described ("meta", "cuda", "sparse_coo",
    "quantized", "nested", "mkldnn", "subclass"), or None."""
    if not k.plain(type(t)):
        return "subclass"
    dev = k.device(t).type
    if dev != "cpu" and dev != "cuda":
        return dev
    layout = k.layout(t)
    if layout is not k.strided:
        return str(layout).replace("torch.", "").lstrip("_")
    if k.is_quantized(t):
        return "quantized"
    if k.is_nested(t):
        return "nested"
    return None


def storage_info(t, k):
    """(base address, bytes, allocator-owned) of dense CPU tensor t's
    storage; (0, 0, False) when it has none (torch.empty(0), resized to 0)."""
    st = k.storage(t)
    base, nbytes = st.data_ptr(), st.nbytes()
    if not base or not nbytes:
        return 0, 0, False
    resizable = getattr(st, "resizable", None)  # 2.x: False for from_blob (numpy, DLPack, frombuffer)
    return base, nbytes, bool(resizable()) if resizable is not None else True


def storage_of(t):
    """(base address, bytes) of a describable tensor's storage, or (0, 0)."""
    try:
        k = kit()
        if skip_reason(t, k) is not None:
            return 0, 0
        return storage_info(t, k)[:2]
    except Exception:
        return 0, 0


_buffers.provide("torch", "Tensor", lambda t: storage_of(t)[0])


def storage_type(torch):
    """torch's C storage class (_C.StorageBase), the base of the storage
    objects a program can hold: UntypedStorage (t.untyped_storage(), 1.13's
    TypedStorage._storage, 2.x's TypedStorage._untyped_storage); None when
    it has none."""
    base = getattr(getattr(torch, "_C", None), "StorageBase", None)
    return base if issubclass(type(base), type) else None


def storage_object_info(st):
    """(base address, bytes, device type, allocator-owned) of storage
    object st, read through _C.StorageBase's own methods and getter (no
    subclass's code runs); (0, 0, None, False) when it has no bytes."""
    base = storage_type(sys.modules["torch"])
    ptr, nbytes = base.data_ptr(st), base.nbytes(st)
    if not ptr or not nbytes:
        return 0, 0, None, False
    dev = base.__dict__["device"].__get__(st).type
    resizable = base.__dict__.get("resizable")  # 2.x only: as storage_info
    return ptr, nbytes, dev, bool(resizable(st)) if resizable is not None else True


_buffers.provide("torch._C", "StorageBase", lambda st: storage_object_info(st)[0])


def _entry(storages, base, nbytes, make, owned, is_shared):
    """storages' entry for base, made by make(nbytes) when new; is_shared
    (a function, or False for device memory) asks whether torch's
    MapAllocator made a new CPU one. It is fingerprinted once one of its
    holders' memory is owned by the allocator."""
    s = storages.get(base)
    if s is None:
        s = storages[base] = make(nbytes)
        if is_shared:
            try:  # torch's MapAllocator (shared memory): not c10's, never recorded
                s.shm = bool(is_shared())
            except Exception:
                pass
    s.fingerprint = s.fingerprint or owned
    return s


def add_storage(storages, st, make):
    """Adds storage object st to storages (base -> make(nbytes)): it holds
    all of its bytes, as a tensor that covers them does. Returns the reason
    it was skipped ("meta", ...), or None."""
    base, nbytes, dev, owned = storage_object_info(st)
    if not base:
        return None
    if dev != "cpu" and dev != "cuda":
        return dev
    if dev != "cpu":
        owned = False  # device memory: the agent must never read it
    s = _entry(storages, base, nbytes, make, owned,
               dev == "cpu" and (lambda: storage_type(sys.modules["torch"]).is_shared(st)))
    s.geoms.append((0, (nbytes,), [1], 1))
    s.full = True
    return None


def add_tensor(storages, t, make, extent_fn, autograd=False):
    """Adds tensor t to storages (base -> make(nbytes)). Returns the reason
    it was skipped, or None."""
    k = kit()
    why = skip_reason(t, k)
    if why is not None:
        return why
    base, nbytes, owned = storage_info(t, k)
    if not base:
        return None  # no bytes: nothing to describe, nothing lost
    if k.device(t).type != "cpu":
        owned = False  # device memory: the agent must never read it
    s = _entry(storages, base, nbytes, make, owned,
               k.device(t).type == "cpu" and (lambda: k.storage(t).is_shared()))
    itemsize = k.element_size(t)
    shape, strides = tuple(k.shape(t)), [st * itemsize for st in k.stride(t)]
    lo, extent = extent_fn(shape, strides, itemsize)
    offset = k.storage_offset(t) * itemsize + lo
    if not autograd:
        s.geoms.append((k.storage_offset(t) * itemsize, shape, strides, itemsize))
    covers = offset <= 0 and offset + extent >= nbytes
    if autograd:
        s.autograd = True
    elif covers:
        s.full = True
    try:
        is_view = k.is_view(t)
    except Exception:
        is_view = False
    if is_view or not covers:
        op = None
        gf = k.grad_fn(t)
        if gf is not None and is_view:
            op = type(gf).__name__.replace("Backward0", "").replace("Backward1", "").lower()
        s.views.append((max(offset, 0), extent, k.numel(t) * itemsize, k.cdata(t), autograd, op))
    return None


# What a saved tensor's getter raises once backward() freed it (torch's
# ERR_BACKWARD_TWICE, the same text in 1.13 and 2.x; C++ stack traces, when
# TORCH_SHOW_CPP_STACKTRACES=1, come after it)
FREED = ("Trying to backward through the graph a second time (or directly access saved "
         "tensors after they have already been freed)")
# Py_TPFLAGS_HEAPTYPE: a class made by a class statement (or type()); as
# _paths.heap_type, which imports this module (_torch may not import it)
_HEAPTYPE = 1 << 9


def saved_by_autograd(tensors, how=None, hooked=None):
    """Tensors saved for backward in the graphs of the given tensors. how: a
    list to fill, one entry per tensor returned, with (the given tensor whose
    graph holds it, the node type names from that tensor's grad_fn down to
    the node that saved it, the saved field's name). Each graph node is
    walked once, from the first given tensor that reaches it. A field saved
    behind a saved-tensor hook is not read (the hook is the program's code)
    but listed in hooked, when given: (tensor, node names, field, the hook
    and its packed value (torch 2.x) or None (1.13))."""
    _hookguard.walking = _thread.get_ident()
    try:
        return _saved(tensors, how, hooked if hooked is not None else [], _hookguard)
    finally:
        _hookguard.walking = None
        _hookguard.take_refused()  # a packed value is not kept past the walk


def _saved(tensors, how, hooked, hk):
    k = kit()
    out, seen, keep = [], set(), []
    tensor = k.tensor
    for root in tensors:
        try:
            gf = k.grad_fn(root) if k.plain(type(root)) else None
        except Exception:
            gf = None
        if gf is None:
            continue
        stack = [(gf, (type(gf).__name__,))]
        while stack:
            node, names = stack.pop()
            # node wrappers are made on access: keep each alive so that its id
            # is not reused by the next one while the walk runs
            keep.append(node)
            if id(node) in seen:
                continue
            seen.add(id(node))
            try:
                attrs = dir(node)
                leaf = getattr(node, "variable", None)  # AccumulateGrad: the leaf it feeds
                nexts = getattr(node, "next_functions", ()) or ()
            except Exception:
                continue
            if issubclass(type(leaf), tensor):
                out.append(leaf)
                if how is not None:
                    how.append((root, names, "variable"))
            # torch's own node: a static C type, not a Python class; its
            # _saved_* getters are generated (gen_autograd_functions.py)
            generated = not type.__dict__["__flags__"].__get__(type(node)) & _HEAPTYPE
            for name in attrs:
                if not name.startswith("_saved_"):
                    continue
                try:
                    behind = hk.behind_hook(node, name)
                    if behind is not None:
                        hooked.append((root, names, name, behind))
                        continue
                    value = getattr(node, name)
                except Exception as exc:  # freed by backward(), or not a tensor
                    if hk.blocked(exc):
                        hooked.append((root, names, name, hk.take_refused()))
                        continue
                    if generated and type(exc) is RuntimeError and str(exc).startswith(FREED):
                        # backward() released every tensor this node saved at
                        # once (its generated release_variables): the others
                        # raise the same, its other fields (sizes, scalars) are
                        # no tensors. One raise is enough: on torch 1.13 each
                        # costs ~1 ms (c10::Error takes a C++ backtrace)
                        break
                    continue
                for v in value if type(value) in (tuple, list) else (value,):
                    if issubclass(type(v), tensor):
                        out.append(v)
                        if how is not None:
                            how.append((root, names, name))
            if "saved_tensors" in attrs:
                # a custom autograd.Function's node is its ctx: what forward
                # saved with ctx.save_for_backward, and tensors set on ctx
                fields = []
                try:
                    behind = hk.behind_hook(node, "saved_tensors")
                    if behind is not None:
                        hooked.append((root, names, "saved_tensors", behind))
                    else:
                        fields = [("saved_tensors[%d]" % i, v) for i, v in enumerate(node.saved_tensors)]
                except Exception as exc:  # freed by backward()
                    if hk.blocked(exc):
                        hooked.append((root, names, "saved_tensors", hk.take_refused()))
                try:
                    d = object.__getattribute__(node, "__dict__")
                    fields += [(key, v) for key, v in dict.items(d) if type(key) is str]
                except Exception:
                    pass
                for name, v in fields:
                    if issubclass(type(v), tensor):
                        out.append(v)
                        if how is not None:
                            how.append((root, names, name))
            for nxt in nexts:
                if type(nxt) is tuple and nxt and nxt[0] is not None:
                    stack.append((nxt[0], names + (type(nxt[0]).__name__,)))
    return out


def _note_copy(out, src, op):
    api = _agent.api()
    torch = sys.modules["torch"]
    if api is None or not issubclass(type(out), torch.Tensor):
        return
    dst, nbytes = storage_of(out)
    s = _buffers.base_of(src)
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
    _script_builtin(real, wrapper)


def _script_builtin(real, wrapper):
    """Give wrapper the TorchScript op of the function it wraps.

    TorchScript compiles a call such as torch.flatten(x) by looking the
    function object up in its table of builtins (torch/jit/_builtins.py:
    id(function) -> "aten::flatten"), built once, at its first use, often
    during import torch: a table built before we wrapped knows only the real
    function, and torch.jit.script of a function calling the wrapper fails
    (it tries to read the source of the builtin behind functools.wraps). A
    table not built yet registers the wrapper by its name itself."""
    try:
        table = getattr(sys.modules.get("torch.jit._builtins"), "_builtin_table", None)
        if type(table) is dict and id(real) in table:
            table[id(wrapper)] = table[id(real)]
    except Exception:  # another torch's layout: scripting is torch's business
        pass


def _whole(t, k):
    """(base, bytes) of dense CPU or CUDA tensor t's storage when t's
    elements cover all of it, contiguous from its first byte; else None."""
    if skip_reason(t, k) is not None:
        return None
    base, nbytes = storage_info(t, k)[:2]
    itemsize = k.element_size(t)
    if (not base or k.storage_offset(t) or k.numel(t) * itemsize != nbytes
            or not k.tb_is_contiguous(t)):
        return None
    return base, nbytes


def _note_copy_into(dst, src):
    """dst.copy_(src) made all of dst's storage a copy of all of src's
    (Module.load_state_dict's param.copy_(input_param)): a copy with its
    source, as if dst were new. Partial copies (into or from a view) are no
    duplicate of anything: not noted."""
    api = _agent.api()
    k = kit()
    if api is None or not issubclass(type(src), k.tensor) or not issubclass(type(dst), k.tensor):
        return
    d, s = _whole(dst, k), _whole(src, k)
    if d and s and d[0] != s[0] and d[1] == s[1] and k.device(dst) == k.device(src):
        api.copy(d[0], s[0], d[1], b"copy_")


def _note_storage_copy(dst, src):
    """dst.copy_(src) of two storages (UntypedStorage.copy_; TypedStorage's
    calls it): all of dst's bytes are a copy of all of src's when both have
    the same size on the same device (a torch.load'ed storage copied into
    one the program had). Sizes that differ: not noted."""
    api = _agent.api()
    base = sys.modules["torch"]._C.StorageBase
    if api is None or not issubclass(type(src), base) or not issubclass(type(dst), base):
        return
    d, s, nbytes = base.data_ptr(dst), base.data_ptr(src), base.nbytes(dst)
    device = base.__dict__["device"].__get__  # the C getter: no subclass property runs
    if d and s and d != s and nbytes and nbytes == base.nbytes(src) and device(dst) == device(src):
        api.copy(d, s, nbytes, b"storage.copy_")


def _wrap_copy_into(owner, note):
    """Wraps owner.copy_ (the source is its second argument, the result its
    first) to note whole-storage copies with note(dst, src): Tensor.copy_
    (_note_copy_into), UntypedStorage.copy_ (_note_storage_copy)."""
    real = getattr(owner, "copy_", None)
    if real is None or getattr(real, "_tensorleak_wrapped", False):
        return

    @functools.wraps(real)
    def copy_(self, src, *args, **kwargs):
        out = real(self, src, *args, **kwargs)
        try:
            note(self, src)
        except Exception:
            pass
        return out

    copy_._tensorleak_wrapped = True
    owner.copy_ = copy_


def wrap_copies(torch):
    """Wraps the entry points that copy a tensor into a new storage, so each
    copy names its source: COPY_METHODS, COPY_FUNCTIONS, the deep copies of
    a tensor and a Parameter (copy.deepcopy: optimizer.load_state_dict on
    torch 1.13, a model's deepcopy), and Tensor.copy_ of a whole storage
    into another (Module.load_state_dict), and UntypedStorage.copy_ (a
    storage the program had, given a torch.load'ed one's bytes). copy.copy of
    a tensor (its __reduce_ex__: _rebuild_tensor_v2 of the same storage)
    shares its storage (both torches): no copy."""
    for name in COPY_METHODS:
        _wrap(torch.Tensor, name, name)
    for name in COPY_FUNCTIONS:
        _wrap(torch, name, name)
    _wrap(torch.Tensor, "__deepcopy__", "deepcopy")
    parameter = getattr(getattr(torch, "nn", None), "Parameter", None)
    if issubclass(type(parameter), type) and "__deepcopy__" in type.__dict__["__dict__"].__get__(parameter):
        _wrap(parameter, "__deepcopy__", "deepcopy")
    _wrap_copy_into(torch.Tensor, _note_copy_into)
    untyped = getattr(torch, "UntypedStorage", None)  # a Python class over _C.StorageBase
    if issubclass(type(untyped), type) and type.__dict__["__flags__"].__get__(untyped) & _HEAPTYPE:
        _wrap_copy_into(untyped, _note_storage_copy)


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
                       if issubclass(type(t), torch.Tensor)]
                name = func.overloadpacket.__name__
                label = ("aten::" + name).encode()
                for t in tree_flatten(out)[0]:
                    if not issubclass(type(t), torch.Tensor):
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


def wrap_worker_loop(torch):
    """Wraps torch.utils.data._utils.worker._worker_loop (a DataLoader
    worker's body, 1.13 and 2.x; the DataLoader looks it up at each start)
    to note the worker's id in its trace: "DataLoader worker 0 of 2", which
    the run report names the process by. A spawned worker unpickles the
    function by name, so it runs the wrapper where its own import wrapped
    it, else the original (then unnumbered)."""
    import inspect

    w = sys.modules.get("torch.utils.data._utils.worker")
    real = getattr(w, "_worker_loop", None)
    if real is None or getattr(real, "_tensorleak_wrapped", False):
        return
    sig = inspect.signature(real)
    if "worker_id" not in sig.parameters:
        return

    @functools.wraps(real)
    def _worker_loop(*args, **kwargs):
        try:
            b = sig.bind_partial(*args, **kwargs).arguments
            wid, n = b.get("worker_id"), b.get("num_workers")
            api = _agent.api()
            if api is not None and isinstance(wid, int):
                of = f" of {n}" if isinstance(n, int) else ""
                api.note(0, f"DataLoader worker {wid}{of}".encode())
        except Exception:
            pass
        return real(*args, **kwargs)

    _worker_loop._tensorleak_wrapped = True
    w._worker_loop = _worker_loop
