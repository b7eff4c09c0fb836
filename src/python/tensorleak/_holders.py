"""What holds each live storage at a report point.

Walks the objects reachable from the roots a user knows (_paths.walk: the
program's own module globals and classes, every thread's live frames)
without entering library modules, library classes or tensors, collects the
tensors and ndarrays found, and reports to the agent, per storage: whether a
reachable tensor covers all of it ("tensor"), only views of part of it
("view"), only autograd graphs hanging off reachable tensors ("autograd"),
or only an uncollected reference cycle ("cycle", _cycles.garbage); every view
with its byte offset, extent and numel x itemsize bytes; and (SNAP_WHY) the
path that reached it, the kind of holder on it and the bytes its views'
elements occupy (_cover.covered: pinned bytes are exact for strided views).

Nothing here may disturb the program: no user code runs (objects are told
apart by their type, tensors and arrays are read through torch's and numpy's
own accessors), each object that cannot be described is skipped and counted,
and what was skipped is said in one note in the trace ("lineage for 3
tensors skipped: 2 meta, 1 sparse_coo"), never on the program's stderr.
"""
import gc
import itertools
import os
import re
import stat
import sys
import types

from tensorleak import _agent, _buffers, _cover, _paths



def _library_prefixes():
    """The directories of the standard library, site- and dist-packages and
    tensorleak's own package. Not from sysconfig: its first get_paths()
    fills its configuration cache (25 KiB), which a pytest test's region
    then counted as the test's."""
    out = {os.path.realpath(os.path.dirname(os.__file__))}  # the standard library
    for p in sys.path:
        if p and ("dist-packages" in p or "site-packages" in p):
            out.add(os.path.realpath(p))
    out.add(os.path.realpath(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    return tuple(out)


_MODULE_DICT = types.ModuleType.__dict__["__dict__"]  # a module's own namespace getter


def _module_dict(mod):
    """A module's namespace, without running code of an odd sys.modules entry:
    a module through ModuleType's own getter (a subclass's __dict__ property
    is code: py's apipkg.ApiModule imports its lazy attributes there), another
    object (a lazy proxy whose __getattr__ imports or raises) through its
    type's standard __dict__ descriptor (_paths._instance_dict); None if it
    has none."""
    try:
        if types.ModuleType in type.__dict__["__mro__"].__get__(type(mod)):
            d = _MODULE_DICT.__get__(mod)
        else:
            d = _paths._instance_dict(mod)
    except Exception:
        return None
    return d if type(d) is dict else None


def _strict_dir(d):
    """os.path.realpath(d) with a slash after it when every component of d
    is there and no symbolic link loop cut its resolution short, else None."""
    try:
        real = os.path.realpath(d, strict=True)
    except (OSError, TypeError):  # missing, a loop; TypeError: no strict before 3.10
        return None
    return real if real.endswith("/") else real + "/"


def _real_dir(d, dirs):
    """_strict_dir(d) of a directory d written with a slash after it. An
    absolute d that ends in a plain name is resolved from its parent: a
    name lstat finds to be a directory (not a symbolic link) resolves to
    itself under its parent's realpath, so each directory costs one lstat,
    not one per component of each path. dirs caches the answers of one
    _roots call."""
    real = dirs.get(d, False)
    if real is not False:
        return real
    real = None
    if d == "/":
        real = d
    elif d.startswith("/"):
        parent, _, name = d[:-1].rpartition("/")
        up = _real_dir(parent + "/", dirs) if name not in ("", ".", "..") else False
        if up is False:
            real = _strict_dir(d)
        elif up is not None:
            try:
                mode = os.lstat(up + name).st_mode
            except OSError:  # not there: realpath itself, file by file
                mode = 0
            if stat.S_ISDIR(mode):
                real = up + name + "/"
            elif stat.S_ISLNK(mode):
                real = _strict_dir(d)
    else:
        real = _strict_dir(d)
    dirs[d] = real
    return real


def _realpath(f, dirs):
    """os.path.realpath(f), with f's directory resolved once per _roots call
    (_real_dir; dirs caches it): realpath lstats every component of a path,
    and ~800 module files share ~130 directories. realpath resolves a path
    component by component, so once f's directory resolved strictly, f
    resolves to it joined with f's last name unless that name is itself a
    symbolic link (or "", ".", ".."): then, and wherever in doubt,
    realpath itself (a NUL in f: an error, or not, as realpath decides)."""
    if "\0" in f:
        return os.path.realpath(f)
    i = f.rfind("/") + 1
    head, tail = f[:i], f[i:]
    real = _real_dir(head, dirs)
    if real is None or tail in ("", ".", ".."):
        return os.path.realpath(f)
    path = real + tail
    try:
        link = stat.S_ISLNK(os.lstat(path).st_mode)
    except OSError:  # what realpath does with a name it cannot lstat
        link = False
    return os.path.realpath(f) if link else path


def _roots():
    """[(module name, namespace)] of the program's own modules: __main__ and
    modules outside the Python installation and tensorleak."""
    prefixes = _library_prefixes()
    dirs = {}
    roots = []
    for name, mod in list(sys.modules.items()):
        d = _module_dict(mod)
        if d is None:
            continue
        if name == "__main__":
            roots.insert(0, (name, d))
            continue
        f = d.get("__file__")
        if type(f) is not str or not f or type(name) is not str or name.startswith("tensorleak"):
            continue
        real = _realpath(f, dirs)
        if not real.startswith(prefixes):
            roots.append((name, d))
    return roots


def reachable(tensor_type, array_type, extra_roots=(), storage_type=None):
    """The walk (_paths.Walk) of the tensors, arrays and storage objects
    (of storage_type) reachable from the roots a user knows: the program's
    module globals (entering its own classes), every thread's live frames,
    and extra_roots (dicts: the copies of the live frames' locals an os_exit
    end point passes). By type only (issubclass of type(obj)): isinstance
    would ask an object for its __class__, which a proxy may answer with
    code of its own."""
    module_dicts = {id(_module_dict(m)) for m in list(sys.modules.values())}
    roots = _roots()
    return _paths.walk(roots, {name for name, _ in roots}, tensor_type, array_type, module_dicts,
                       extra_roots, storage_type=storage_type)


class _Storage:
    __slots__ = ("nbytes", "full", "views", "autograd", "fingerprint", "geoms", "why", "cycle",
                 "shm")

    def __init__(self, nbytes):
        self.nbytes = nbytes
        self.geoms = []  # (first element's byte offset, shape, byte strides, itemsize) of live tensors
        self.why = None  # (path text, TL_CAUSE_*) of the first holder found
        self.cycle = False  # held only by a reference cycle (gc garbage)
        self.fingerprint = False  # host memory of a CPU allocator its provider knows
        self.full = False
        self.views = []
        self.autograd = False
        self.shm = False  # a CPU storage in shared memory (torch's MapAllocator)


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


class _Skipped:
    """Objects a report point could not describe, by reason, for its note."""

    def __init__(self):
        self.reasons = {}
        self.count = 0
        self.error = None

    def add(self, why):
        self.count += 1
        self.reasons[why] = self.reasons.get(why, 0) + 1

    def failed(self, exc):
        self.add("error")
        if self.error is None:
            self.error = f"{type(exc).__name__}: {exc}"[:120]

    def text(self, what):
        parts = ", ".join(f"{n} {why}" for why, n in sorted(self.reasons.items()))
        s = f"lineage for {self.count} {what}{'' if self.count == 1 else 's'} skipped: {parts}"
        return s + (f" (first error: {self.error})" if self.error else "")


def _each(items, skipped, fn):
    seen = set()
    for x in items:
        if id(x) in seen:
            continue
        seen.add(id(x))
        try:
            why = fn(x)
        except Exception as exc:
            skipped.failed(exc)
        else:
            if why is not None:
                skipped.add(why)


def _base_of(obj):
    """The storage base address of a tensor or array, or 0."""
    from tensorleak import _numpy, _torch  # noqa: F401 (they register with _buffers)

    return _buffers.base_of(obj)


def _library_roots():
    """[(module name, namespace)] of numpy's own modules: numpy keeps small
    buffers in its module state (the seed of np.random's global generator,
    caches), made while its code ran and kept for the process's life."""
    roots = []
    for name, mod in list(sys.modules.items()):
        if type(name) is str and (name == "numpy" or name.startswith("numpy.")):
            d = _module_dict(mod)
            if d is not None:
                roots.append((name, d))
    return roots


def _library_walk(array_type, module_dicts, skipped):
    """The walk of numpy's module state, and its buffers ({base: _Storage})."""
    w = _paths.walk(_library_roots(), set(), None, array_type, module_dicts, frames=False)
    from tensorleak import _numpy

    found = {}
    _each(w.arrays, skipped, lambda a: _numpy.add_array(found, a, _Storage, _extent, _numpy.min_storage()))
    return w, found


def _library_holders(api, storages, array_type, module_dicts, skipped):
    """The numpy buffers the program does not reach but numpy's module state
    does: held by a library's own state, not a problem, and said so
    ("held by numpy.random.mtrand's module state (library internals): ...")
    rather than left with an unknown holder. Adds them to storages, but,
    once numpy's handler is wrapped, only those the agent holds for live
    storages: numpy's own buffers made before the handler (getlimits',
    polynomial's, ~60) are plain blocks the report never reads holders of."""
    from tensorleak import _numpy

    w, found = _library_walk(array_type, module_dicts, skipped)
    plain = set()
    if _numpy.handler_wrapped:
        live, hit = _agent.storages_live(api, found)
        if live >= 0:
            plain = set(found) - hit
    for obj in w.arrays:
        base = _base_of(obj)
        s = found.get(base)
        if s is None or s.why is not None or base in storages or base in plain:
            continue
        path = w.path(obj)
        i = id(obj)
        while w.parent.get(i) is not None:
            i = w.parent[i]
        label = w.roots.get(i, ("numpy.", None))[0].rstrip(".")
        s.why = (f"held by {label}'s module state (library internals): {path[0] if path else '?'}",
                 _agent.CAUSE_NONE)
    for base, s in found.items():
        if base not in storages and s.why is not None:
            storages[base] = s


def _library_may_hold(api):
    """Can numpy's module state hold a storage? Not when numpy's handler is
    wrapped and has recorded none (a torch program that imports numpy only
    because torch does): then its walk (~10-20 ms) is skipped."""
    from tensorleak import _numpy

    if not _numpy.handler_wrapped or not _agent.has(api, "numpy_storages"):
        return True  # numpy's big buffers are storages by the size rule
    return api.numpy_storages() != 0


def _name_holders(w, storages, tensor_type):
    """Each storage's path: the first (shortest) path to one of its tensors
    (or arrays), else to a storage object of it."""
    for obj in w.tensors + w.arrays + w.storages:
        base = _base_of(obj)
        s = storages.get(base)
        if s is not None and s.why is None:
            s.why = w.path(obj)


def _name_graph_holders(w, storages, tensor_type, saved, how):
    """The path of each storage held only by autograd: through the first
    reachable tensor whose graph saved one of its tensors."""
    for t, (root, names, field) in zip(saved, how):
        s = storages.get(_base_of(t))
        if s is None or s.why is not None or s.full or any(not v[4] for v in s.views):
            continue
        path = w.path(root)
        if path is not None:
            s.why = (_paths.graph_text(path[0], names, field), path[1])


def _subclass_ids(cls):
    """({ids} of cls and of the classes deriving from it now, the classes by
    id): the classes issubclass(k, cls) is true of, found from cls down
    through type.__subclasses__ (the classes naming a class among their
    bases) rather than by asking of every class: the same classes but
    where a metaclass's own mro() puts cls in the __mro__ of a class that
    does not derive from it (none known does). (None, None) when cls's
    metaclass has a __subclasscheck__ of its own (issubclass runs it).
    Keep the classes while the ids are used."""
    for k in type.__dict__["__mro__"].__get__(type(cls)):
        if k is type:
            break
        if "__subclasscheck__" in type.__dict__["__dict__"].__get__(k):
            return None, None
    classes, todo = {id(cls): cls}, [cls]
    while todo:
        for sub in type.__subclasses__(todo.pop()):
            if id(sub) not in classes:
                classes[id(sub)] = sub
                todo.append(sub)
    return {i for i, k in classes.items() if issubclass(k, cls)}, classes


def _unreached(w, tensor_type, storage_type=None):
    """[the tensors, and storage objects of storage_type (or None), that gc
    tracks and walk w did not reach], in gc's order; the list is their only
    reference from here (the list of every object gc tracks is gone when
    this returns)."""
    kinds = (tensor_type,) if storage_type is None else (tensor_type, storage_type)
    found = [_subclass_ids(k) for k in kinds]
    objs = gc.get_objects()
    if any(ids is None for ids, _ in found):
        return [o for o in objs if issubclass(type(o), kinds) and not w.seen(o)]
    # ~100k objects: each one's class is looked up in C, not asked of
    # issubclass; by id, so that no metaclass's own __hash__ or __eq__ runs
    ids = set().union(*(ids for ids, _ in found))
    return [o for o in itertools.compress(objs, map(ids.__contains__, map(id, map(type, objs))))
            if not w.seen(o)]


def _all_found(api, storages):
    """Did the walk find every live storage the agent recorded (so that no
    tensor outside it can hold one and the search of gc's objects for
    reference cycles, ~20 ms at 100k objects, has nothing to find)? Not
    known once CUDA is initialised: device storages are not in the agent's
    answer (include/tensorleak.h, storages_live)."""
    torch = sys.modules.get("torch")
    try:
        if torch is None or torch.cuda.is_initialized():
            return False
    except Exception:
        return False
    live, hit = _agent.storages_live(api, storages)
    return live >= 0 and len(hit) == live


def _covered(s, snap, notes):
    """Bytes of s its live views' elements occupy, or COVERED_UNKNOWN."""
    try:
        n, exact = _cover.covered(s.geoms, s.nbytes)
    except Exception:
        return _agent.COVERED_UNKNOWN
    if not exact:
        notes.add("pinned bytes of views with more than %d runs counted by extent" % _cover.MAX_RUNS)
    return n


# Shared-memory storages registered so far (base addresses): once each.
_shared_registered = set()
# ... and those registered when received (_shm._note_received): base ->
# tag; the walk registers such a base again only under another tag (a
# new segment mapped where an unmapped one was).
received = {}
SHARED_ORIGIN = b"shared memory"
SHARED_MADE_ORIGIN = b"shared memory made"  # _shm._note_shared: where a segment was made


_SHM_LINE = re.compile(rb"^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ (\d+) +(/dev/shm/[^\n]*)$", re.M)


def _shm_mappings():
    """[(start, end, inode, path)] of this process's file mappings in shared
    memory (/dev/shm: torch's file-descriptor and file-name strategies),
    from /proc/self/maps; [] when it cannot be read."""
    try:
        with open("/proc/self/maps", "rb") as f:
            text = f.read()
        # one search over the text, not a split of its ~1000 lines: a
        # worker's collate asks once per batch (_shm._note_shared)
        return [(int(m[1], 16), int(m[2], 16), int(m[3]), m[4].decode("utf-8", "replace"))
                for m in _SHM_LINE.finditer(text)]
    except (OSError, ValueError):
        return []


def shm_tag(base, maps=None):
    """The tag of the shared-memory mapping that holds address base
    ("shm /dev/shm/NAME inode N": the segment's identity in every process
    that maps it), or None."""
    for lo, hi, inode, path in maps if maps is not None else _shm_mappings():
        if lo <= base < hi:
            return f"shm {path} inode {inode}".encode("utf-8", "replace")[:200]
    return None


def _register_shared(api, storages):
    """The CPU storages in shared memory the walk found (a DataLoader
    worker's batch, share_memory_(), a tensor from a torch.multiprocessing
    queue) are mapped by torch's MapAllocator, not allocated by c10's CPU
    allocator: the agent never saw them. Registered here, at the report
    point, as storages of origin "shared memory", each tagged with its
    mapping ("shm /dev/shm/torch_... inode N", the segment's identity in
    every process that maps it), so their views, holders and problems are
    reported. Never raises."""
    try:
        new = [b for b, s in storages.items() if s.shm and b not in _shared_registered]
        if not new:
            return
        maps = _shm_mappings()
        for base in new:
            s = storages[base]
            tag = shm_tag(base, maps)
            if tag and received.get(base, b"").rsplit(b" ", 1)[-1] == tag.rsplit(b" ", 1)[-1]:
                continue  # registered when received, and still the same segment (inode)
            api.storage_register(base, s.nbytes, SHARED_ORIGIN)
            _shared_registered.add(base)
            if tag:
                api.tag(base, tag)
    except Exception:
        pass


def describe(api, snap, extra_roots=()):
    """Reports what holds each live storage at report point snap. Whatever
    cannot be described is left out and named in notes; never raises."""
    try:
        torch = sys.modules.get("torch")
        np = sys.modules.get("numpy")
        tensor_type = getattr(torch, "Tensor", None) if torch else None
        array_type = getattr(np, "ndarray", None) if np else None
        if not issubclass(type(tensor_type), type):
            tensor_type = None
        if not issubclass(type(array_type), type):
            array_type = None
        if tensor_type is None and array_type is None:
            return
        storage_type = None
        if tensor_type is not None:
            from tensorleak import _torch

            storage_type = _torch.storage_type(torch)
        w = reachable(tensor_type, array_type, extra_roots, storage_type)
        tensors, arrays = w.tensors, w.arrays
    except Exception as exc:
        _agent.note(f"lineage skipped: cannot walk the program's objects ({type(exc).__name__}: {exc})"[:250], snap)
        return
    storages = {}
    saved, how, hooked = [], [], []  # per saved tensor: the reachable tensor whose graph saved it, and where
    tensors_skipped, arrays_skipped = _Skipped(), _Skipped()
    if tensor_type is not None:
        from tensorleak import _torch

        _each(tensors, tensors_skipped,
              lambda t: _torch.add_tensor(storages, t, _Storage, _extent))
        try:
            saved = _torch.saved_by_autograd(tensors, how, hooked)
        except Exception as exc:
            saved, how[:], hooked[:] = [], [], []
            tensors_skipped.failed(exc)
        _each(saved, tensors_skipped,
              lambda t: _torch.add_tensor(storages, t, _Storage, _extent, autograd=True))
        # a storage object the program keeps (cache["buf"] = t.untyped_storage())
        _each(w.storages, tensors_skipped, lambda st: _torch.add_storage(storages, st, _Storage))
    if array_type is not None:
        from tensorleak import _numpy

        _each(arrays, arrays_skipped,
              lambda a: _numpy.add_array(storages, a, _Storage, _extent, _numpy.min_storage()))
    notes = set()
    try:
        _name_holders(w, storages, tensor_type)
        _name_graph_holders(w, storages, tensor_type, saved, how)
        if hooked:
            from tensorleak import _hooked

            _hooked.add(w, hooked, storages, tensor_type, _Storage, _extent, tensors_skipped)
        if w.capped:
            notes.add(f"holders: walk capped at {_paths.MAX_OBJECTS} objects")
        if tensor_type is not None and not _all_found(api, storages):
            from tensorleak import _cycles

            n = _cycles.search(w, storages, tensor_type, tensors_skipped, w.module_dicts,
                               _unreached(w, tensor_type, storage_type), _Storage, _extent)
            if n:
                notes.add(n)
    except Exception as exc:
        tensors_skipped.failed(exc)
    if array_type is not None and _library_may_hold(api):
        try:
            _library_holders(api, storages, array_type, w.module_dicts, arrays_skipped)
        except Exception as exc:
            arrays_skipped.failed(exc)
    w = tensors = arrays = saved = how = hooked = None
    if "tensorleak._shm" in sys.modules:
        sys.modules["tensorleak._shm"].add_open_segments(storages, _Storage)
    _register_shared(api, storages)
    # host memory of c10's CPU allocator or numpy's handler, whatever torch
    # says of its resizability (2.x: False for torch.load's storages)
    for base in _agent.storages_live(api, storages)[1]:
        storages[base].fingerprint = True
    why_ok = _agent.has(api, "snapshot_why")
    for base, s in storages.items():
        if s.cycle:
            held = _agent.HELD_CYCLE
        elif s.full:
            held = _agent.HELD_TENSOR
        elif s.views and not all(v[4] for v in s.views):
            held = _agent.HELD_VIEW
        elif s.autograd:
            held = _agent.HELD_AUTOGRAD
        else:
            held = _agent.HELD_UNKNOWN
        # bytes only for memory its provider knows as host memory of a CPU
        # allocator: the agent reads (fingerprints) what it is given
        api.snapshot_hold(snap, base, s.nbytes if s.fingerprint else 0, held, None)
        for offset, extent, nbytes, obj, via_autograd, op in s.views:
            if via_autograd:
                continue
            api.snapshot_view(snap, base, offset, extent, nbytes, obj,
                              op.encode() if op else None)
        if why_ok:
            covered = _covered(s, snap, notes) if held == _agent.HELD_VIEW else _agent.COVERED_UNKNOWN
            text, cause = s.why or ("", _agent.CAUSE_NONE)
            api.snapshot_why(snap, base, covered, cause,
                             text.encode("utf-8", "replace")[:1024] or None)
    for n in sorted(notes):
        _agent.note(n, snap)
    for sk, what in ((tensors_skipped, "tensor"), (arrays_skipped, "array")):
        if sk.count:
            _agent.note(sk.text(what), snap)
