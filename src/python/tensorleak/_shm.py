"""Shared-memory storages of torch (MapAllocator: a DataLoader worker's
batch, share_memory_(), a torch.multiprocessing queue's tensor), which no
allocator hook sees: where a process makes each (noted for the run report,
which names the maker of a segment another process keeps) and when a
process receives one (registered then, unregistered by the agent at its
munmap). The end point's walk registers the others it finds live
(_holders._register_shared)."""
import functools
import os
import sys

from tensorleak import _agent


def _segment(st, by_name):
    """(api, base, bytes, its /dev/shm path, its inode) of CPU storage st in
    shared memory, or None (no agent, not CPU, no bytes). by_name: shared
    by file name (the file_system strategy: _share_filename_cpu_ gives its
    handle), else by descriptor (file_descriptor, Linux's default: the
    descriptor torch keeps). Each asks only the strategy st was shared
    with: the other would move st to a new segment. No /proc/self/maps
    read: it costs ~2 ms in a torch process under the agent, too much once
    per batch."""
    api = _agent.api()
    if api is None or st.device.type != "cpu":
        return None
    base, nbytes = st.data_ptr(), st.nbytes()
    if not base or not nbytes:
        return None
    if by_name:
        path = "/dev/shm" + os.fsdecode(st._share_filename_cpu_()[1])  # (manager, handle, size)
        return api, base, nbytes, path, os.stat(path).st_ino
    fd = st._share_fd_cpu_()[0]  # (fd, size) in 1.13 and 2.x
    return api, base, nbytes, os.readlink(f"/proc/self/fd/{fd}"), os.fstat(fd).st_ino


def _note_shared(st):
    """A storage just made in shared memory (a DataLoader worker's collate,
    share_memory_()): where it was made, for the process that keeps it
    (the run report joins the two by the segment's inode). Recorded as a
    storage registered and at once unregistered: its site and tag stay in
    the trace, and the process that made it and sends it away does not
    count it live (torch's MapAllocator frees it unseen)."""
    from tensorleak import _holders
    from torch.multiprocessing import get_sharing_strategy

    seg = _segment(st, get_sharing_strategy() == "file_system")
    if seg is None:
        return
    api, base, nbytes, _, ino = seg
    samples = _samples_tag(api)
    api.storage_register(base, nbytes, _holders.SHARED_MADE_ORIGIN)
    api.tag(base, f"shm inode {ino}".encode())
    if samples:
        api.tag(base, samples)
    api.storage_unregister(base)


# The functions of torch.utils.data._utils.collate that make a worker's
# batch in shared memory, and their list of samples: collate_tensor_fn
# (2.x) and default_collate (1.13) each name it `batch`.
_COLLATE = ("collate_tensor_fn", "default_collate")


def _batch_samples():
    """The samples a DataLoader worker's collate is stacking into the
    segment being made: the local `batch` of the collate frame among the
    callers of _note_shared, read from the frame (no code of the program
    runs), or ()."""
    f = sys._getframe(2)
    for _ in range(6):
        if f is None:
            break
        c = f.f_code
        if c.co_name in _COLLATE and c.co_filename.endswith("collate.py"):
            b = f.f_locals.get("batch")
            return b if type(b) in (list, tuple) else ()
        f = f.f_back
    return ()


def _samples_tag(api):
    """b"samples ID,..." for a DataLoader worker's batch: the allocation
    sites (the agent's stack ids, in this process's trace) of the storages
    of the samples it is made from, the first 4 distinct, for the run
    report's "from samples made at"; None when none is known (not a
    collate, `all` mode, samples inherited from the parent)."""
    from tensorleak import _torch

    if not _agent.has(api, "storage_stack"):
        return None
    torch = sys.modules["torch"]
    ids = []
    for x in _batch_samples()[:64]:
        base = _torch.storage_of(x)[0] if issubclass(type(x), torch.Tensor) else 0
        sid = api.storage_stack(base) if base else 0
        if sid and sid not in ids:
            ids.append(sid)
            if len(ids) == 4:
                break
    return ("samples " + ",".join(map(str, ids))).encode() if ids else None


def wrap_shared(torch):
    """Wraps the two ways a CPU storage is made in shared memory, in 1.13 and
    2.x, to note where each is made (_note_shared):
    torch.storage._StorageBase._new_shared (the classmethod that collate's
    batches come from) and _StorageBase.share_memory_ (a storage moved
    there: Tensor.share_memory_(), which UntypedStorage's calls through
    super(); it calls _share_fd_cpu_ itself, not _new_shared)."""
    base = getattr(getattr(torch, "storage", None), "_StorageBase", None)
    real = base.__dict__.get("_new_shared") if base is not None else None
    if isinstance(real, classmethod) and not getattr(real.__func__, "_tensorleak_wrapped", False):
        func = real.__func__

        @functools.wraps(func)
        def _new_shared(cls, *args, **kwargs):
            out = func(cls, *args, **kwargs)
            try:
                _note_shared(out)
            except Exception:
                pass
            return out

        _new_shared._tensorleak_wrapped = True
        base._new_shared = classmethod(_new_shared)
    move = base.__dict__.get("share_memory_") if base is not None else None
    if callable(move) and not getattr(move, "_tensorleak_wrapped", False):

        @functools.wraps(move)
        def share_memory_(self, *args, **kwargs):
            was = _shared_now(self)
            out = move(self, *args, **kwargs)
            if was is False:  # moved now: noted once, not at each call
                try:
                    _note_shared(self)
                except Exception:
                    pass
            return out

        share_memory_._tensorleak_wrapped = True
        base.share_memory_ = share_memory_


def _note_received(st, by_name):
    """A CPU storage just received in shared memory (rebuilt from another
    process's descriptor or file name: a DataLoader batch, a
    torch.multiprocessing queue's tensor): registered now, where it was
    received, so it is in the timeline and its views are seen as they are
    made; the agent unregisters it at its munmap (src/agent/shm.h). Tagged
    as the end point's walk tags it ("shm /dev/shm/NAME inode N"), and
    remembered so that the walk does not register it again. One received
    again (torch's cache of rebuilt storages) is registered once."""
    from tensorleak import _holders

    seg = _segment(st, by_name)
    if seg is None:
        return
    api, base, nbytes, path, ino = seg
    tag = f"shm {path} inode {ino}".encode("utf-8", "replace")[:200]
    if _holders.received.get(base) == tag:
        return
    api.storage_register(base, nbytes, _holders.SHARED_ORIGIN)
    api.tag(base, tag)
    _holders.received[base] = tag


def wrap_received(torch):
    """Wraps torch.multiprocessing.reductions.rebuild_storage_fd and
    rebuild_storage_filename (how every CPU storage sent by descriptor or
    by file name is rebuilt by its receiver, 1.13 and 2.x; pickle finds
    them by name, so the receiver runs the wrapper where the provider
    wrapped it) to register what they return (_note_received)."""
    r = sys.modules.get("torch.multiprocessing.reductions")
    for name, by_name in (("rebuild_storage_fd", False), ("rebuild_storage_filename", True)):
        real = getattr(r, name, None)
        if real is not None and not getattr(real, "_tensorleak_wrapped", False):
            setattr(r, name, _received_wrapper(real, by_name))


def _received_wrapper(real, by_name):
    @functools.wraps(real)
    def rebuild(*args, **kwargs):
        out = real(*args, **kwargs)
        try:
            _note_received(out, by_name)
        except Exception:
            pass
        return out

    rebuild._tensorleak_wrapped = True
    return rebuild


def _shared_now(st):
    """st.is_shared(), or None when it cannot be asked."""
    try:
        return bool(st.is_shared())
    except Exception:
        return None


# numpy arrays (or anything) over multiprocessing.shared_memory: each
# SharedMemory mapping of this process registered as a storage: its base
# address -> (bytes, a weak reference to its SharedMemory object).
segments = {}


def wrap_shared_memory(mod):
    """Wraps multiprocessing.shared_memory.SharedMemory.__init__ (CPython
    3.8+) to register each mapping it makes (_note_shared_memory)."""
    cls = getattr(mod, "SharedMemory", None)
    real = cls.__dict__.get("__init__") if isinstance(cls, type) else None
    if real is None or getattr(real, "_tensorleak_wrapped", False):
        return

    @functools.wraps(real)
    def __init__(self, *args, **kwargs):
        real(self, *args, **kwargs)
        try:
            _note_shared_memory(self, bool(kwargs.get("create", args[1] if len(args) > 1 else False)))
        except Exception:
            pass

    __init__._tensorleak_wrapped = True
    cls.__init__ = __init__


def _note_shared_memory(shm, created):
    """A SharedMemory object just mapped its segment (POSIX: /dev/shm/NAME,
    kept open by its descriptor): a "shared memory" storage from now to
    its munmap (close(), or the mapping's last buffer gone), tagged with
    the segment's file and inode; the process that created it tags it
    "shm inode N" first, for the run report's "Made by" (its maker is
    where it was registered)."""
    from tensorleak import _holders

    api = _agent.api()
    if api is None or os.name != "posix":
        return
    import ctypes
    import weakref

    c = ctypes.c_char.from_buffer(shm._mmap)  # exported for this line only
    base = ctypes.addressof(c)
    del c
    size, ino = len(shm._mmap), os.fstat(shm._fd).st_ino
    if not base or not size:
        return
    tag = f"shm /dev/shm{shm._name} inode {ino}".encode("utf-8", "replace")[:200]
    api.storage_register(base, size, _holders.SHARED_ORIGIN)
    if created:  # the maker's tag first (the run report's collect_made)
        api.tag(base, f"shm inode {ino}".encode())
    api.tag(base, tag)
    _holders.received[base] = tag
    segments[base] = (size, weakref.ref(shm))


def segment_of(addr):
    """(base, bytes) of the SharedMemory mapping of this process that holds
    address addr, or None."""
    for base, (size, _) in list(segments.items()):
        if base <= addr < base + size:
            return base, size
    return None


def add_open_segments(storages, make):
    """At a report point: each registered SharedMemory mapping whose object
    is still open holds its whole segment (only close() unmaps it): its
    storage in storages (made with make(bytes) when no array over it was
    found) is held in full, by that object. Those closed or gone are
    forgotten."""
    for base, (size, ref) in list(segments.items()):
        shm = ref()
        if shm is None or shm._mmap is None:
            del segments[base]
            continue
        s = storages.get(base)
        if s is None:
            s = storages[base] = make(size)
        if not s.full:  # the arrays found hold part of it: the object holds it all
            s.why = (f"SharedMemory {shm._name.lstrip('/')!r} (not closed)", _agent.CAUSE_NONE)
        s.shm = s.full = True
