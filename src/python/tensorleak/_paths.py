"""Who holds each tensor and array: the path from a root the user knows.

walk() searches breadth first from the roots a user can name -- the
program's module globals, the live frames of every thread -- through
gc.get_referents, entering the program's own classes (their attributes,
functools caches on their methods), closures, exceptions and their
tracebacks' frames, and any other object, but not library modules, library
classes nor tensors and arrays themselves. The first (shortest) path to each
tensor or array is kept and rendered on demand:

    global failures[0].__traceback__.tb_next -> decode() local 'raw' -> ndarray

with the kind of holder it runs through (a cache, a traceback, a closure,
optimizer state, a class attribute, a thread's frame).

cycles() then looks at the tensors gc tracks that no root reaches: one that
only an unreachable reference cycle refers to is what the collector would
free (gc garbage), decided the collector's own way without collecting: over
the objects reachable from it, the references from outside that set are the
reference counts minus the references from inside it; objects with outside
references and what they reach are alive, the rest is garbage.

No user code runs: objects are told apart by type(), containers are read
through dict's, list's and tuple's own methods, keys are rendered from
their types (never repr() of a user object). Work is capped (MAX_OBJECTS,
MAX_CYCLE_SET) and the caller is told when a cap cut it.
"""
import gc
import os
import sys
import types
from collections import deque

from tensorleak import _agent

MAX_OBJECTS = 2_000_000  # objects one walk visits at most
MAX_CYCLE_SET = 20_000  # objects reachable from one unreached tensor, at most
MAX_CANDIDATES = 256  # unreached tensors examined for cycles, at most

_LEAF = (str, bytes, bytearray, int, float, complex, bool, type(None), types.ModuleType,
         types.BuiltinFunctionType, types.CodeType)
_OURS = os.path.dirname(os.path.abspath(__file__))
# the cause a path is named by when it runs through several kinds of holder
_PRIORITY = (_agent.CAUSE_TRACEBACK, _agent.CAUSE_CACHE, _agent.CAUSE_CLOSURE,
             _agent.CAUSE_OPTIMIZER, _agent.CAUSE_CLASS)


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
        self.capped = False

    def seen(self, obj):
        return id(obj) in self.parent

    def path(self, obj):
        """(text, cause) of the path that reached obj, or None."""
        chain = []
        i = id(obj)
        while i is not None and len(chain) < 64:
            chain.append(self.objs[i])
            i = self.parent.get(i)
        chain.reverse()
        label, cause = self.roots.get(id(chain[0]), ("?", _agent.CAUSE_NONE))
        text, c = render(chain, label)
        return text, c if c != _agent.CAUSE_NONE else cause


def _type_name(obj):
    return type.__dict__["__name__"].__get__(type(obj))


def _key(k, depth=0):
    """A dict key or index, rendered from its type: repr only for builtins."""
    t = type(k)
    if t in (str, int, float, bool, type(None)):
        return repr(k) if t is not str or len(k) < 40 else repr(k[:37] + "...")
    if t is tuple and depth < 2:
        return "(" + ", ".join(_key(x, depth + 1) for x in tuple.__iter__(k)) + ")"
    return _type_name(k)


def _frame_name(f):
    code = f.f_code
    return f"{code.co_name}()"


def _is_exception(obj):
    return issubclass(type(obj), BaseException)


def _attr_dict(parent, child):
    """Is dict child the attribute dict of parent (an instance, a class)?"""
    t = type(parent)
    if t in (dict, list, tuple, set, frozenset, types.FrameType, types.TracebackType,
             types.CellType) or issubclass(t, dict):
        return False
    return type(child) is dict


def _step(parent, child, attr):
    """How parent refers to child, as path text; attr: parent is an
    attribute dict (render keys as .name)."""
    t = type(parent)
    if _is_ctx(child):
        return ".grad_fn"
    if issubclass(t, dict):
        for k, v in dict.items(parent):
            if v is child:
                if attr and type(k) is str:
                    return "." + k
                return "[" + _key(k) + "]"
            if k is child:
                return " key"
        return " -> dict"
    if issubclass(t, (list, tuple)):
        it = list.__iter__(parent) if issubclass(t, list) else tuple.__iter__(parent)
        for n, v in enumerate(it):
            if v is child:
                return f"[{n}]"
        return ""
    if t is types.FrameType:
        try:
            for name, v in parent.f_locals.items():
                if v is child:
                    return f" local '{name}'"
        except Exception:
            pass
        return " (frame)"
    if t is types.TracebackType:
        return ".tb_next" if type(child) is types.TracebackType else ""
    if t is types.CellType:
        return ".cell_contents"
    if _is_exception(parent):
        for name in ("__traceback__", "__context__", "__cause__"):
            try:
                if getattr(parent, name) is child:
                    return "." + name
            except Exception:
                pass
        return ".args" if type(child) is tuple else ""
    if t is types.FunctionType:
        if child is parent.__closure__:
            return f" -> {parent.__name__}() closure"
        if child is parent.__defaults__:
            return ".__defaults__"
        return ""
    if t in _lru_types():
        try:
            if child is parent.__dict__:
                return ""
        except Exception:
            pass
        return " -> lru_cache"
    return ""


def render(chain, root_label):
    """(text, cause) of a chain of objects from a root down to its last."""
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
        elif t in lru:
            causes.add(_agent.CAUSE_CACHE)
        elif t is types.CellType:
            causes.add(_agent.CAUSE_CLOSURE)
        elif issubclass(t, type):
            causes.add(_agent.CAUSE_CLASS)
        elif _is_optimizer(parent) and type(child) is dict:
            causes.add(_agent.CAUSE_OPTIMIZER)
        s = _step(parent, child, attr)
        if type(child) is types.FrameType:
            s += f" -> {_frame_name(child)}"
        parts.append(s)
        attr = s != " -> lru_cache" and (_attr_dict(parent, child) or
                                         (issubclass(t, type) and type(child) is dict))
        if attr and _is_ctx(parent):
            parts.append(f" ({_type_name(parent)}) -> ctx")
    last = chain[-1]
    parts.append(" -> " + _type_name(last))
    for c in _PRIORITY:
        if c in causes:
            return "".join(parts), c
    return "".join(parts), _agent.CAUSE_NONE


def _is_optimizer(obj):
    torch = sys.modules.get("torch")
    opt = getattr(getattr(torch, "optim", None), "Optimizer", None) if torch else None
    return issubclass(type(opt), type) and issubclass(type(obj), opt)


def _is_ctx(obj):
    torch = sys.modules.get("torch")
    fn = getattr(getattr(getattr(torch, "autograd", None), "function", None),
                 "BackwardCFunction", None) if torch else None
    return issubclass(type(fn), type) and issubclass(type(obj), fn)


def _program_class(cls, program):
    try:
        mod = type.__dict__["__module__"].__get__(cls)
    except Exception:
        return False
    return type(mod) is str and mod in program


def walk(module_roots, program_modules, tensor_type, array_type, module_dicts, extra_roots=()):
    """Breadth-first walk from module_roots ([(name, dict)]), the live
    frames of all threads, then extra_roots (dicts of locals). program_modules:
    the names of the program's own modules (their classes are entered)."""
    w = Walk()
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
            names[th.ident] = th.name
    except Exception:
        pass
    me = sys._getframe()
    for tid, f in sys._current_frames().items():
        while f is not None:
            if f is not me and not f.f_code.co_filename.startswith(_OURS):
                label = f"thread {names.get(tid, tid)}: {_frame_name(f)}"
                root(f, label, _agent.CAUSE_THREAD)
            f = f.f_back
    del f, me
    for d in extra_roots:
        if type(d) is dict:
            root(d, "local ", _agent.CAUSE_NONE)
    while q:
        obj = q.popleft()
        i_obj = id(obj)
        for ref in gc.get_referents(obj):
            i = id(ref)
            if i in w.parent:
                continue
            if len(w.parent) >= MAX_OBJECTS:
                w.capped = True
                q.clear()
                break
            cls = type(ref)
            if tensor_type is not None and issubclass(cls, tensor_type):
                w.parent[i], w.objs[i] = i_obj, ref
                w.tensors.append(ref)
                continue
            if array_type is not None and issubclass(cls, array_type):
                w.parent[i], w.objs[i] = i_obj, ref
                w.arrays.append(ref)
                continue
            if issubclass(cls, _LEAF) or (cls is dict and i in module_dicts):
                continue
            if issubclass(cls, type) and not _program_class(ref, program_modules):
                continue
            w.parent[i], w.objs[i] = i_obj, ref
            q.append(ref)
    return w


def _leafish(obj):
    return issubclass(type(obj), _LEAF) or issubclass(type(obj), type)


def _closure(cands, k):
    """The objects reachable from cands[k] (it first), or None past the cap."""
    s = [cands[k]]
    index = {id(s[0]): 0}
    n = 0
    while n < len(s):
        for r in gc.get_referents(s[n]):
            if id(r) not in index and not _leafish(r):
                if len(s) >= MAX_CYCLE_SET:
                    return None, None
                index[id(r)] = len(s)
                s.append(r)
        n += 1
    return s, index


def garbage(cands, k):
    """Is cands[k] held only by objects no outside reference keeps (what
    gc would free)? Returns the object set and index when it is, else
    (None, None). The caller holds cands[k] only through the list cands."""
    s, index = _closure(cands, k)
    if s is None:
        return None, None
    internal = [0] * len(s)
    for n in range(len(s)):
        for r in gc.get_referents(s[n]):
            j = index.get(id(r))
            if j is not None:
                internal[j] += 1
    r = None
    s.append(object())  # calibration: referred to by s only
    base = sys.getrefcount(s[-1])
    s.pop()
    alive = [False] * len(s)
    todo = []
    for n in range(len(s)):
        extra = 1 if n == 0 else 0  # cands[k] itself
        if sys.getrefcount(s[n]) - base - extra - internal[n] > 0:
            alive[n] = True
            todo.append(n)
    while todo:
        n = todo.pop()
        for r in gc.get_referents(s[n]):
            j = index.get(id(r))
            if j is not None and not alive[j]:
                alive[j] = True
                todo.append(j)
    r = None
    if alive[0]:
        return None, None
    return s, index


def cycle_text(s, index):
    """The shortest reference cycle through s[0] within s, rendered."""
    start = s[0]
    prev = {0: None}
    q = deque([0])
    end = None
    while q and end is None:
        n = q.popleft()
        for r in gc.get_referents(s[n]):
            j = index.get(id(r))
            if j is None:
                continue
            if j == 0:
                end = n
                break
            if j not in prev:
                prev[j] = n
                q.append(j)
    if end is None:
        kinds = sorted({_type_name(o) for o in s[1:6]})
        return "held only by unreachable objects (gc garbage: " + ", ".join(kinds) + ")"
    chain = []
    n = end
    while n is not None:
        chain.append(s[n])
        n = prev[n]
    chain.reverse()
    chain.append(start)
    text, _ = render(chain, _type_name(start))
    return f"held only by a reference cycle (gc would free it; the cycle runs through {text})"
