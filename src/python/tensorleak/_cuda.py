"""PyTorch CUDA storages from PyTorch's own allocator history.

The CUDA caching allocator keeps a history of its allocations and frees when
asked to (torch.cuda.memory._record_memory_history); its snapshot
(torch.cuda.memory._snapshot()) is a dict of plain Python values. This
module turns a snapshot into trace records through the agent's API (frame,
stack, device_alloc, device_free), the same code live (at report points) and
in the CPU tests (the fixture's pickled snapshots).

- Recording starts when the program first initializes CUDA (a callback
  queued with torch.cuda._lazy_call, which torch runs inside its own lazy
  init): nothing here initializes CUDA, so a process that never uses the GPU
  (or forks DataLoader workers first) is unchanged.
- The history keeps at most TENSORLEAK_CUDA_HISTORY entries (default
  100000; torch's max_entries): when it wraps, the oldest events are gone,
  so peaks before the oldest kept event are missed; blocks still live at
  the snapshot whose alloc fell off are recovered from the snapshot's
  segments (with their frames), timed at the oldest kept event, and counted
  in a note.
- Time: a snapshot's time_us is microseconds since the Unix epoch
  (system_clock); the trace clock is CLOCK_MONOTONIC. An event goes to
  time_us * 1000 - (time.time_ns() - time.monotonic_ns()), the offset read
  when the snapshot is converted.
- Blocks (kind cuda) come from alloc / free_completed (the address is
  reusable only after the stream work completed). Segments (cuda_segment)
  come from the agent's own libcudart interposition when it runs live;
  from the snapshot's segment_alloc / segment_free only when asked
  (segments=True: the offline fixture).
- A frame of the snapshot (name, filename, line) becomes a frame of the
  site, innermost first, as torch lists them.

Never raises into the program: every entry point is guarded by its caller.
"""
import os
import time

KIND_CUDA, KIND_CUDA_SEGMENT, KIND_PINNED = 17, 18, 19

DEFAULT_HISTORY = 100000

_ALLOC = {"alloc": KIND_CUDA, "segment_alloc": KIND_CUDA_SEGMENT}
_FREE = {"free_completed": KIND_CUDA, "segment_free": KIND_CUDA_SEGMENT}


def events(snapshot, clock_offset_ns, segments=False, after_us=None):
    """The storage events of a snapshot, in time order: a list of tuples
    (ts_ns, is_free, kind, device, stream, addr, size, frames), frames a
    tuple of (filename, name, line), innermost first. Events at or before
    after_us (a time_us already converted) are left out. Returns (events,
    recovered): recovered counts live blocks whose alloc the history lost."""
    out = []
    live = {}  # (device, addr) -> True for blocks alive in the replay
    first_us = None
    for device, trace in enumerate(snapshot.get("device_traces") or ()):
        for e in trace or ():
            action = e.get("action")
            kind = _ALLOC.get(action)
            is_free = False
            if kind is None:
                kind = _FREE.get(action)
                is_free = True
            if kind is None or (kind == KIND_CUDA_SEGMENT and not segments):
                continue
            t_us = int(e.get("time_us") or 0)
            if first_us is None or t_us < first_us:
                first_us = t_us
            addr, size = int(e.get("addr") or 0), int(e.get("size") or 0)
            if kind == KIND_CUDA:
                if is_free:
                    live.pop((device, addr), None)
                else:
                    live[(device, addr)] = True
            if after_us is not None and t_us <= after_us:
                continue
            out.append(
                (
                    t_us * 1000 - clock_offset_ns,
                    is_free,
                    kind,
                    device,
                    int(e.get("stream") or 0),
                    addr,
                    size,
                    _frames(e.get("frames")),
                )
            )
    recovered = 0
    if after_us is None:
        base_ns = (first_us * 1000 - clock_offset_ns) if first_us is not None else None
        for seg in snapshot.get("segments") or ():
            device = int(seg.get("device") or 0)
            for b in seg.get("blocks") or ():
                if b.get("state") != "active_allocated":
                    continue
                addr = int(b.get("address") or 0)
                if (device, addr) in live:
                    continue
                recovered += 1
                ts = base_ns if base_ns is not None else 0
                size = int(b.get("size") or 0)
                frames = b.get("frames")
                if frames is None and b.get("history"):  # torch 1.13
                    frames = b["history"][-1].get("frames")
                frames = _frames(frames)
                out.append((ts, False, KIND_CUDA, device, int(seg.get("stream") or 0), addr, size, frames))
    out.sort(key=lambda ev: ev[0])  # stable: same-time events keep their order
    return out, recovered


def _frames(frames):
    return tuple(
        (str(f.get("filename") or "?"), str(f.get("name") or "?"), int(f.get("line") or 0))
        for f in frames or ()
    )


class Feeder:
    """Writes converted events through the agent's table `api`, interning
    frames and stacks once each."""

    def __init__(self, api):
        import ctypes

        self.api = api
        self.ctypes = ctypes
        self.frame_ids = {}
        self.stack_ids = {}

    def stack(self, frames):
        sid = self.stack_ids.get(frames)
        if sid is not None:
            return sid
        vals = []
        for fr in frames:
            v = self.frame_ids.get(fr)
            if v is None:
                v = self.api.frame(
                    fr[0].encode("utf-8", "surrogateescape"), fr[1].encode("utf-8", "surrogateescape"), fr[2]
                )
                self.frame_ids[fr] = v
            if v:
                vals.append(v)
        arr = (self.ctypes.c_uint64 * len(vals))(*vals)
        sid = self.api.stack(arr, len(vals))
        self.stack_ids[frames] = sid
        return sid

    def feed(self, evs):
        for ts, is_free, kind, device, stream, addr, size, frames in evs:
            ts = max(int(ts), 1)
            if is_free:
                self.api.device_free(kind, device, addr, ts)
            else:
                self.api.device_alloc(kind, device, stream, addr, size, self.stack(frames), ts)
        return len(evs)


def history_entries():
    try:
        n = int(os.environ.get("TENSORLEAK_CUDA_HISTORY", DEFAULT_HISTORY))
    except ValueError:
        n = DEFAULT_HISTORY
    return max(n, 1)


class Recorder:
    """The live path: starts torch's history recording when CUDA first
    initializes, and drains new events into the trace at report points."""

    def __init__(self, api, note):
        self.api = api
        self.note = note
        self.torch = None
        self.started = False
        self.after_us = None
        self.feeder = None
        self.pid = None  # the process that started the history

    def install(self, torch):
        """Queue the start behind torch's lazy CUDA init; never initializes
        CUDA itself (is_initialized and _lazy_call do not)."""
        self.torch = torch
        cuda = getattr(torch, "cuda", None)
        if cuda is None or not hasattr(cuda, "_lazy_call"):
            return
        if cuda.is_initialized():
            self.start()
        else:
            cuda._lazy_call(self.start)

    def start(self):
        # Runs inside torch's _lazy_init: an exception here would become
        # the program's DeferredCudaCallError, so nothing escapes.
        try:
            record = self.torch.cuda.memory._record_memory_history
            n = history_entries()
            import inspect

            params = inspect.signature(record).parameters
            if "max_entries" in params:  # torch >= 2.1
                record(enabled="all", stacks="python", max_entries=n)
            elif "trace_alloc_max_entries" in params:  # torch 2.0
                record(True, record_context=True, trace_alloc_max_entries=n, trace_alloc_record_context=True)
            else:  # torch 1.13: the live blocks' frames only, no history
                record(True)
            self.started = True
            self.pid = os.getpid()
        except Exception as exc:
            self.note(f"CUDA storages not recorded: {type(exc).__name__}: {exc}"[:250])

    def drain(self, snap_id=0):
        """Converts the history since the last drain into trace records."""
        # A fork child (a DataLoader worker) must not touch CUDA: its
        # parent's history is the parent's to report.
        if not self.started or self.pid != os.getpid():
            return 0
        snapshot = self.torch.cuda.memory._snapshot()
        offset = time.time_ns() - time.monotonic_ns()
        evs, recovered = events(snapshot, offset, segments=False, after_us=self.after_us)
        if self.feeder is None:
            self.feeder = Feeder(self.api)
        n = self.feeder.feed(evs)
        last = [e.get("time_us", 0) for tr in snapshot.get("device_traces") or () for e in tr[-1:]]
        if last:
            self.after_us = max([self.after_us or 0] + [int(t or 0) for t in last])
        wrapped = any(len(tr) >= history_entries() for tr in snapshot.get("device_traces") or ())
        if wrapped or recovered:
            self.note(
                f"CUDA history wrapped at {history_entries()} entries: events before the oldest kept"
                f" one are missing; {recovered} live blocks recovered from the snapshot's segments",
                snap_id,
            )
        return n
