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


def _segment(st):
    """(api, base, bytes, the descriptor torch keeps) of CPU storage st in
    shared memory by descriptor, or None (no agent, not CPU, no bytes)."""
    api = _agent.api()
    if api is None or st.device.type != "cpu":
        return None
    base, nbytes = st.data_ptr(), st.nbytes()
    if not base or not nbytes:
        return None
    return api, base, nbytes, st._share_fd_cpu_()[0]  # (fd, size) in 1.13 and 2.x


def _note_shared(st):
    """A storage just made in shared memory (a DataLoader worker's collate,
    share_memory_()): where it was made, for the process that keeps it
    (the run report joins the two by the segment's inode). Recorded as a
    storage registered and at once unregistered: its site and tag stay in
    the trace, and the process that made it and sends it away does not
    count it live (torch's MapAllocator frees it unseen)."""
    from tensorleak import _holders
    from torch.multiprocessing import get_sharing_strategy

    # The segment's inode from the descriptor torch keeps (file_descriptor,
    # Linux's default strategy): /proc/self/maps costs ~2 ms a read in a
    # torch process under the agent, too much once per batch.
    seg = _segment(st) if get_sharing_strategy() == "file_descriptor" else None
    if seg is None:
        return
    api, base, nbytes, fd = seg
    tag = f"shm inode {os.fstat(fd).st_ino}".encode()
    api.storage_register(base, nbytes, _holders.SHARED_MADE_ORIGIN)
    api.tag(base, tag)
    api.storage_unregister(base)


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


def _note_received(st):
    """A CPU storage just received in shared memory (rebuilt from another
    process's descriptor: a DataLoader batch, a torch.multiprocessing
    queue's tensor): registered now, where it was received, so it is in
    the timeline and its views are seen as they are made; the agent
    unregisters it at its munmap (src/agent/shm.h). Tagged as the end
    point's walk tags it ("shm /dev/shm/NAME inode N", from the descriptor
    torch keeps: /proc/self/maps costs ~2 ms a read under the agent), and
    remembered so that the walk does not register it again."""
    from tensorleak import _holders

    seg = _segment(st)
    if seg is None:
        return
    api, base, nbytes, fd = seg
    path = os.readlink(f"/proc/self/fd/{fd}")
    tag = f"shm {path} inode {os.fstat(fd).st_ino}".encode("utf-8", "replace")[:200]
    api.storage_register(base, nbytes, _holders.SHARED_ORIGIN)
    api.tag(base, tag)
    _holders.received[base] = tag


def wrap_received(torch):
    """Wraps torch.multiprocessing.reductions.rebuild_storage_fd (how every
    CPU storage sent by descriptor is rebuilt by its receiver, 1.13 and 2.x;
    pickle finds it by name, so the receiver runs the wrapper where the
    provider wrapped it) to register what it returns (_note_received)."""
    r = sys.modules.get("torch.multiprocessing.reductions")
    real = getattr(r, "rebuild_storage_fd", None)
    if real is None or getattr(real, "_tensorleak_wrapped", False):
        return

    @functools.wraps(real)
    def rebuild_storage_fd(*args, **kwargs):
        out = real(*args, **kwargs)
        try:
            _note_received(out)
        except Exception:
            pass
        return out

    rebuild_storage_fd._tensorleak_wrapped = True
    r.rebuild_storage_fd = rebuild_storage_fd


def _shared_now(st):
    """st.is_shared(), or None when it cannot be asked."""
    try:
        return bool(st.is_shared())
    except Exception:
        return None
