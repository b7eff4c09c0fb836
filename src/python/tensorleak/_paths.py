"""Who holds each tensor and array: the path from a root the user knows.

walk() searches breadth first from the roots a user can name -- the
program's module globals, the live frames of every thread -- through
gc.get_referents, entering the program's own classes (their attributes,
functools caches on their methods), closures, exceptions and their
tracebacks' frames, and any other object, but not library modules, library
classes nor tensors, arrays and storage objects themselves. The first
(shortest) path to each tensor, array or storage object (an UntypedStorage
the program keeps without a tensor) is kept and rendered on demand:

    global failures[0].__traceback__.tb_next -> decode() local 'raw' -> ndarray

with the kind of holder it runs through (a cache, a traceback, a closure,
optimizer state, a class attribute, a thread's frame).

The tensors no root reaches are then looked at by _cycles (reference
cycles, gc's and autograd's).

No user code runs: objects are told apart by type(), containers are read
through dict's, list's and tuple's own methods, keys are rendered from
their types (never repr() of a user object). Work is capped (MAX_OBJECTS)
and the caller is told when a cap cut it.
"""
import gc
import os
import sys
import types
from collections import deque

from tensorleak import _agent

MAX_OBJECTS = 2_000_000  # objects one walk visits at most

_LEAF = (str, bytes, bytearray, int, float, complex, bool, type(None), types.ModuleType,
         types.BuiltinFunctionType, types.CodeType)
_OURS = os.path.dirname(os.path.abspath(__file__))
_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement (or type())
# objects a path runs through that the user does not name
_PLUMBING = (dict, list, tuple, set, types.CellType, types.FrameType, types.TracebackType,
             types.FunctionType, types.MethodType)
# the cause a path is named by when it runs through several kinds of holder
_PRIORITY = (_agent.CAUSE_TRACEBACK, _agent.CAUSE_CACHE, _agent.CAUSE_CLOSURE,
             _agent.CAUSE_OPTIMIZER, _agent.CAUSE_CLASS, _agent.CAUSE_THREAD)


_lru = None


def _lru_types():
    """functools' cache wrapper types (the C one and the Python one)."""
    global _lru
    if _lru is None:
        import functools

        out = []
        for t in (getattr(functools, "_lru_cache_wrapper", None), type(functools.lru_cache()(len))):
            if issubclass(type(t), type) and t not in out:
                out.append(t)
        _lru = tuple(out)
    return _lru


class Walk:
    """The result of one walk: found objects (tensors, arrays) and, per id,
    how it was reached. Keeps every object it passed alive until dropped."""

    def __init__(self):
        self.parent = {}  # id -> id of the object it was reached from (None: a root)
        self.objs = {}  # id -> object
        self.roots = {}  # id -> (label, cause)
        self.tensors, self.arrays = [], []
        self.storages = []  # storage objects (torch's UntypedStorage)
        self.capped = False
        self.module_dicts = set()  # ids of every module's namespace
        self.grads = set()  # ids of tensors reached as another's .grad
        self.where = {}  # _where's memo: id of a container -> {id of an item: where}

    def seen(self, obj):
        return id(obj) in self.parent

    def path(self, obj, keys=True):
        """(text, cause) of the path that reached obj, or None. keys: name a
        dict key that is a tensor by its own path (key_name)."""
        chain = []
        i = id(obj)
        while i is not None and len(chain) < 64:
            chain.append(self.objs[i])
            i = self.parent.get(i)
        chain.reverse()
        label, cause = self.roots.get(id(chain[0]), ("?", _agent.CAUSE_NONE))
        text, c = render(chain, label, self.key_name if keys else None, self.where)
        return text, c if c != _agent.CAUSE_NONE else cause

    def key_name(self, k):
        """A tensor used as a dict key (an optimizer's state is keyed by
        its parameters), named by the path that reached it, in a module's
        dotted words: "<Parameter of model.0.weight>"; None when the walk
        reached it only as that key."""
        tensor = getattr(sys.modules.get("torch"), "Tensor", None)
        if not issubclass(type(tensor), type) or not issubclass(type(k), tensor):
            return None
        if id(k) not in self.parent or id(k) not in self.objs or self.objs[id(k)] is not k:
            return None
        text = self.path(k, keys=False)[0]
        head, sep, kind = text.rpartition(" -> ")
        if not sep or head.endswith(" key") or " key ->" in head:
            return None
        if head.startswith("global "):
            head = head[len("global "):]
        for attr in ("_modules", "_parameters", "_buffers"):
            while f".{attr}['" in head:
                a = head.index(f".{attr}['")
                b = head.find("']", a)
                if b < 0:
                    break
                head = head[:a] + "." + head[a + len(attr) + 3:b] + head[b + 2:]
        return f"<{kind} of {head}>"


def _type_name(obj):
    return type.__dict__["__name__"].__get__(type(obj))


def _key(k, depth=0, key_name=None):
    """A dict key or index, rendered from its type: repr only for builtins;
    key_name(k), when given and it knows k, names any other key."""
    t = type(k)
    if key_name is not None and depth == 0 and not _is_one_of(t, (str, int, float, bool, tuple)):
        name = key_name(k)
        if name is not None:
            return name
    if _is_one_of(t, (str, int, float, bool, type(None))):
        return repr(k) if t is not str or len(k) < 40 else repr(k[:37] + "...")
    if t is tuple and depth < 2:
        return "(" + ", ".join(_key(x, depth + 1) for x in tuple.__iter__(k)) + ")"
    return _type_name(k)


def _frame_name(f):
    code = f.f_code
    return f"{code.co_name}()"


_SUSPENDED = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


def _suspended_frame(gen):
    """The frame of a generator, coroutine or async generator (None once done)."""
    for name in ("gi_frame", "cr_frame", "ag_frame"):
        fr = getattr(gen, name, None)
        if type(fr) is types.FrameType:
            return fr
    return None


def _local_name(frame, child):
    """The name of frame's local variable whose value is child, or None."""
    try:
        for name, v in frame.f_locals.items():
            if v is child:
                return name
    except Exception:
        pass
    return None


def _default_name(fn, defaults, child):
    """The parameter whose default value (in the tuple defaults of function
    fn) is child, or None."""
    code = fn.__code__
    names = code.co_varnames[:code.co_argcount]
    for n, v in enumerate(tuple.__iter__(defaults)):
        if v is child and len(defaults) <= len(names):
            return names[len(names) - len(defaults) + n]
    return None


def _is_exception(obj):
    return issubclass(type(obj), BaseException)


def _instance_dict(obj):
    """obj's attribute dict through the standard __dict__ descriptor of its
    type (a class's own __dict__ property is user code: None then)."""
    for klass in type.__dict__["__mro__"].__get__(type(obj)):
        desc = type.__dict__["__dict__"].__get__(klass).get("__dict__")
        if desc is not None:
            if type(desc) is types.GetSetDescriptorType:
                try:
                    d = desc.__get__(obj)
                except Exception:
                    return None
                return d if type(d) is dict else None
            return None
    return None


def heap_type(cls):
    """Whether class cls was made by a class statement (or type()): its
    Py_TPFLAGS_HEAPTYPE, read through type's own getter (no metaclass code
    runs)."""
    return bool(type.__dict__["__flags__"].__get__(cls) & _HEAPTYPE)


def _slot_name(obj, child):
    """The name of the __slots__ attribute of obj whose value is child, or
    None. Read through the member descriptors of the classes made by a class
    statement (heap types) in obj's class's __mro__: C code that reads the
    slot, no property of a subclass runs."""
    for klass in type.__dict__["__mro__"].__get__(type(obj)):
        if not heap_type(klass):
            continue
        for name, desc in type.__dict__["__dict__"].__get__(klass).items():
            if type(desc) is not types.MemberDescriptorType:
                continue
            try:
                v = desc.__get__(obj)
            except Exception:  # AttributeError: the slot was never set
                continue
            if v is child:
                return name
    return None


def referents(obj):
    """What obj refers to, for the walk: gc's referents, and a running
    frame's locals (its traverse visits them only once the frame is done)."""
    refs = gc.get_referents(obj)
    if type(obj) is types.FrameType:
        try:
            refs = refs + list(obj.f_locals.values())
        except Exception:
            pass
    return refs


def _is_one_of(t, kinds):
    """Is class t one of kinds? By identity: `t in kinds` would compare with
    ==, which runs the __eq__ of t's metaclass when it has one."""
    for k in kinds:
        if t is k:
            return True
    return False


def _class_dict(cls):
    """The dict behind a class's __dict__ mappingproxy (its tp_dict), or None."""
    try:
        proxy = type.__dict__["__dict__"].__get__(cls)
        refs = gc.get_referents(proxy)
    except Exception:
        return None
    return refs[0] if len(refs) == 1 and type(refs[0]) is dict else None


def _attr_dict(parent, child):
    """Is dict child the attribute dict of parent (an instance, a class)?
    Only that very dict: since CPython 3.11 an instance's attribute values
    are its gc referents directly, so a dict it holds in an attribute
    (n.store = {"k": t}) is a referent too, and its keys are no attributes
    (n.store['k'], not n.k)."""
    t = type(parent)
    if type(child) is not dict or issubclass(t, dict) or _is_one_of(
            t, (list, tuple, set, frozenset, types.FrameType, types.TracebackType,
                types.CellType)):
        return False
    if issubclass(t, type):
        return _class_dict(parent) is child
    return _instance_dict(parent) is child


MEMO_MIN = 16  # items of a container whose positions _where remembers


def _where(parent, child, t, memo):
    """Where child is in container parent (of type t, a dict, list or tuple
    subclass): ("v", key) for the first item whose value it is, ("k", None)
    for a key it is first, (n, None) for a list's or tuple's index n; None
    when not there. memo (or None): the positions of each container of
    MEMO_MIN items or more, found in one pass: a path through a list of
    300k arrays asked it for each of them (quadratic before: 12 min)."""
    if issubclass(t, dict):
        items = ((("v", k), v, (("k", None)), k) for k, v in dict.items(parent))
        size = dict.__len__(parent)
    else:
        it = list.__iter__(parent) if issubclass(t, list) else tuple.__iter__(parent)
        items = (((n, None), v, None, None) for n, v in enumerate(it))
        size = list.__len__(parent) if issubclass(t, list) else tuple.__len__(parent)
    if memo is None or size < MEMO_MIN:
        for at_v, v, at_k, k in items:
            if v is child:
                return at_v
            if at_k is not None and k is child:
                return at_k
        return None
    index = memo.get(id(parent))
    if index is None:
        index = memo[id(parent)] = {}
        for at_v, v, at_k, k in items:
            index.setdefault(id(v), at_v)
            if at_k is not None:
                index.setdefault(id(k), at_k)
    return index.get(id(child))


def _step(parent, child, attr, key_name=None, memo=None):
    """How parent refers to child, as path text; attr: parent is an
    attribute dict (render keys as .name); key_name: as _key's; memo:
    _where's."""
    t = type(parent)
    if _is_ctx(child):
        return ".grad_fn"
    tensor = getattr(sys.modules.get("torch"), "Tensor", None)
    if issubclass(type(tensor), type) and issubclass(t, tensor) and issubclass(type(child), tensor):
        return ".grad"  # the only tensor a walk reaches from a tensor"
    if issubclass(t, dict):
        at = _where(parent, child, t, memo)
        if at is None:
            return " -> dict"
        if at[0] == "k":
            return " key"
        k = at[1]
        if attr and type(k) is str:
            return "." + k
        return "[" + _key(k, key_name=key_name) + "]"
    if issubclass(t, (list, tuple)):
        at = _where(parent, child, t, memo)
        return f"[{at[0]}]" if at is not None else ""
    if t is types.FrameType:
        name = _local_name(parent, child)
        return f" local '{name}'" if name is not None else " (frame)"
    if t is types.TracebackType:
        return ".tb_next" if type(child) is types.TracebackType else ""
    if t is types.CellType:
        return ".cell_contents"
    if _is_exception(parent):
        for name in ("__traceback__", "__context__", "__cause__"):
            try:  # BaseException's own getters: no property of a subclass runs
                if BaseException.__dict__[name].__get__(parent) is child:
                    return "." + name
            except Exception:
                pass
        return ".args" if type(child) is tuple else ""
    if t is types.FunctionType:
        if child is parent.__closure__:
            return f" -> {parent.__name__}() closure"
        if child is parent.__defaults__:
            return ""  # the tuple's step names the parameter (render)
        return ""
    if _is_one_of(t, _SUSPENDED):
        fr = _suspended_frame(parent)
        if fr is None or child is fr:
            return " (generator)"  # before 3.11 its frame is a referent: render names it
        name = _local_name(fr, child)
        return f" (generator) -> {_frame_name(fr)} local '{name}'" if name else " (generator)"
    if _is_one_of(t, _lru_types()):
        try:
            if child is parent.__dict__:
                return ""
        except Exception:
            pass
        return " -> lru_cache"
    if type(child) is not dict or not _attr_dict(parent, child):
        # 3.11+: an instance's attribute values are its referents directly
        d = _instance_dict(parent)
        if d is not None:
            for k, v in dict.items(d):
                if v is child and type(k) is str:
                    return "." + k
        name = _slot_name(parent, child)  # a __slots__ value is a referent too
        if name is not None:
            return "." + name
    return ""


def render(chain, root_label, key_name=None, memo=None):
    """(text, cause) of a chain of objects from a root down to its last;
    key_name: as _key's; memo: _where's (Walk.where)."""
    causes = set()
    parts = [root_label]
    attr = False
    lru = _lru_types()
    for n in range(1, len(chain)):
        parent, child = chain[n - 1], chain[n]
        if n == 1 and type(parent) is dict and root_label.endswith((" ", ".")):
            for k, v in dict.items(parent):  # a module's namespace: "global NAME"
                if v is child and type(k) is str:
                    parts.append(k)
                    break
            else:
                parts.append("?")
            attr = False
            continue
        t = type(parent)
        if t is types.TracebackType or _is_exception(parent) and type(child) is types.TracebackType:
            causes.add(_agent.CAUSE_TRACEBACK)
        elif _is_one_of(t, lru):
            causes.add(_agent.CAUSE_CACHE)
        elif t is types.CellType:
            causes.add(_agent.CAUSE_CLOSURE)
        elif issubclass(t, type):
            causes.add(_agent.CAUSE_CLASS)
        elif _is_optimizer(parent) and issubclass(type(child), dict):
            causes.add(_agent.CAUSE_OPTIMIZER)
        if _is_thread_local(parent) and type(child) is dict:
            # its per-thread dicts, by a weak key of each live thread's entry:
            # which thread is not known from here
            causes.add(_agent.CAUSE_THREAD)
            parts.append(" (threading.local of a live thread)")
            attr = False
            continue
        if n >= 2 and _is_thread_local(chain[n - 2]) and type(parent) is dict:
            attr = type(child) is dict  # that thread's attribute dict: .name from it
            continue
        grand = chain[n - 2] if n >= 2 else None
        if t is tuple and type(grand) is types.FunctionType and grand.__defaults__ is parent:
            causes.add(_agent.CAUSE_CLOSURE)  # a default value: state of the function
            name = _default_name(grand, parent, child)
            s = f" default '{name}'" if name else _step(parent, child, attr, key_name, memo)
        else:
            s = _step(parent, child, attr, key_name, memo)
        if type(child) is types.FrameType:
            s += f" -> {_frame_name(child)}"
        parts.append(s)
        attr = s != " -> lru_cache" and _attr_dict(parent, child)
        if attr and _is_ctx(parent):
            parts.append(f" ({_type_name(parent)}) -> ctx")
    last = chain[-1]
    parts.append(" -> " + _type_name(last))
    for c in _PRIORITY:
        if c in causes:
            return "".join(parts), c
    return "".join(parts), _agent.CAUSE_NONE


def _is_thread_local(obj):
    """Is obj a threading.local (the C _thread._local, or a subclass)?"""
    try:
        import _thread

        return issubclass(type(obj), _thread._local)
    except Exception:
        return False


def _is_optimizer(obj):
    torch = sys.modules.get("torch")
    opt = getattr(getattr(torch, "optim", None), "Optimizer", None) if torch else None
    return issubclass(type(opt), type) and issubclass(type(obj), opt)


def _is_ctx(obj):
    torch = sys.modules.get("torch")
    fn = getattr(getattr(getattr(torch, "autograd", None), "function", None),
                 "BackwardCFunction", None) if torch else None
    return issubclass(type(fn), type) and issubclass(type(obj), fn)


def _grad_getter(tensor_type):
    """torch's own .grad getter of a plain tensor (no subclass property), or None."""
    torch = sys.modules.get("torch")
    if tensor_type is None or torch is None:
        return None
    try:
        from tensorleak import _torch

        k = _torch.kit()
        tb = getattr(torch._C, "TensorBase", None) or torch._C._TensorBase
        get, is_leaf = tb.grad.__get__, tb.is_leaf.__get__
    except Exception:
        return None

    def grad(t):
        try:
            # only a leaf has a .grad: reading a non-leaf's warns (UserWarning)
            if not k.plain(type(t)) or not is_leaf(t):
                return None
            g = get(t)
        except Exception:
            return None
        return g if issubclass(type(g), tensor_type) else None

    return grad


def _program_class(cls, program):
    try:
        mod = type.__dict__["__module__"].__get__(cls)
    except Exception:
        return False
    return type(mod) is str and mod in program


def walk(module_roots, program_modules, tensor_type, array_type, module_dicts, extra_roots=(),
         frames=True, objects=(), storage_type=None):
    """Breadth-first walk from module_roots ([(name, dict)]), the live
    frames of all threads (unless frames is false), extra_roots (dicts
    of locals), then objects ([(object, its path text)]). program_modules:
    the names of the program's own modules (their classes are entered).
    storage_type: the class of storage objects to collect (w.storages)."""
    w = Walk()
    w.module_dicts = module_dicts
    grad_of = _grad_getter(tensor_type)
    q = deque()

    def root(obj, label, cause):
        if id(obj) in w.parent:
            return
        w.parent[id(obj)] = None
        w.objs[id(obj)] = obj
        w.roots[id(obj)] = (label, cause)
        q.append(obj)

    for name, d in module_roots:
        root(d, "global " if name == "__main__" else name + ".", _agent.CAUSE_NONE)
    # the module dict is the root: its first step renders the key bare
    names = {}
    try:
        import threading

        for th in threading.enumerate():
            d = _instance_dict(th) or {}  # not th.name: a subclass's property would run
            ident, name = d.get("_ident"), d.get("_name")
            if type(ident) is int and type(name) is str:
                names[ident] = name
    except Exception:
        pass
    me, f = sys._getframe(), None
    for tid, f in sys._current_frames().items() if frames else ():
        while f is not None:
            if f is not me and not f.f_code.co_filename.startswith(_OURS):
                label = f"thread {names.get(tid, tid)}: {_frame_name(f)}"
                root(f, label, _agent.CAUSE_THREAD)
            f = f.f_back
    del f, me
    for d in extra_roots:
        if type(d) is dict:
            root(d, "local ", _agent.CAUSE_NONE)
    for obj, label in objects:
        root(obj, label, _agent.CAUSE_NONE)
    # an optimizer refers to every parameter (param_groups, its state's
    # keys): walked last, so a parameter is named through its model and only
    # what the optimizer alone keeps (Adam's moments) through the optimizer
    torch = sys.modules.get("torch")
    opt_type = getattr(getattr(torch, "optim", None), "Optimizer", None) if torch else None
    if not issubclass(type(opt_type), type):
        opt_type = None
    later = []
    while q or later:
        if not q:
            q.extend(later)
            later = []
        obj = q.popleft()
        i_obj = id(obj)
        for ref in referents(obj):
            i = id(ref)
            if i in w.parent:
                continue
            if len(w.parent) >= MAX_OBJECTS:
                w.capped = True
                q.clear()
                later.clear()
                break
            cls = type(ref)
            if tensor_type is not None and issubclass(cls, tensor_type):
                w.parent[i], w.objs[i] = i_obj, ref
                w.tensors.append(ref)
                g = grad_of(ref) if grad_of else None  # a C++ field, no gc referent
                if g is not None and id(g) not in w.parent:
                    w.parent[id(g)], w.objs[id(g)] = i, g
                    w.grads.add(id(g))
                    w.tensors.append(g)
                continue
            if array_type is not None and issubclass(cls, array_type):
                w.parent[i], w.objs[i] = i_obj, ref
                w.arrays.append(ref)
                continue
            if storage_type is not None and issubclass(cls, storage_type):
                w.parent[i], w.objs[i] = i_obj, ref
                w.storages.append(ref)
                continue
            if issubclass(cls, _LEAF) or (cls is dict and i in module_dicts):
                continue
            if issubclass(cls, type) and not _program_class(ref, program_modules):
                continue
            w.parent[i], w.objs[i] = i_obj, ref
            (later if opt_type is not None and issubclass(cls, opt_type) else q).append(ref)
    return w


def graph_text(root_path, names, field):
    """How an autograd graph holds a tensor it saved, after the path to the
    tensor that owns the graph: "global history[0] -> Tensor.grad_fn ->
    MeanBackward0 -> TanhBackward0._saved_result -> Tensor"."""
    names = list(names)
    if len(names) > 4:
        names = names[:2] + ["..."] + names[-1:]
    return f"{root_path}.grad_fn -> {' -> '.join(names)}.{field} -> Tensor"
