"""PyTorch CUDA storages from PyTorch's own allocator history.

The CUDA caching allocator keeps a history of its allocations and frees when
asked to (torch.cuda.memory._record_memory_history); its snapshot
(torch.cuda.memory._snapshot()) is a dict of plain Python values. This
module turns a snapshot into trace records through the agent's API (frame,
stack, device_alloc, device_free), the same code live and in the CPU tests
(the fixture's pickled snapshots).

- Recording starts when the program first initializes CUDA (a callback
  queued with torch.cuda._lazy_call, which torch runs inside its own lazy
  init): nothing here initializes CUDA, so a process that never uses the GPU
  (or forks DataLoader workers first) is unchanged.
- The history is read (drained) at report points and, while the program
  runs, every TENSORLEAK_CUDA_DRAIN seconds (default 1; 0: report points
  only), from hooks the program runs anyway: the start of a garbage
  collection (gc.callbacks) and tensorleak.region's boundaries. No thread of
  ours: a drain runs on a thread that holds the GIL, as the program's own
  snapshot would. The period halves (down to 50 ms) after a read that found
  the history more than half full, and grows back when it is quiet.
- After each read the history is cleared (torch's clear_history, torch >=
  2.6, unless the program records the history itself), so a read costs what
  happened since the last one; without clear_history, a read skips the
  events it fed before (by time, and by count within the last time).
- The history keeps at most TENSORLEAK_CUDA_HISTORY entries per device
  (default 100000; torch's max_entries) between two reads: when more happen,
  the oldest are gone. What is lost then: blocks both allocated and freed in
  that gap (the peak may be missed); nothing of the live set, which every
  read reconciles with the snapshot's segments: a block live there whose
  alloc the history lost is recovered (with its frames, timed at the read's
  oldest kept event), a block the trace holds that the snapshot no longer
  has gets a free at that time (its free was lost), and a note says how
  many. Clearing has a gap of its own (a few microseconds between the
  snapshot and the clear, where another thread's events are lost); the
  reconciliation covers it the same way.
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
import threading
import time

KIND_CUDA, KIND_CUDA_SEGMENT, KIND_PINNED = 17, 18, 19

DEFAULT_HISTORY = 100000
DEFAULT_DRAIN_S = 1.0
MIN_DRAIN_S = 0.05

_ALLOC = {"alloc": KIND_CUDA, "segment_alloc": KIND_CUDA_SEGMENT}
_FREE = {"free_completed": KIND_CUDA, "segment_free": KIND_CUDA_SEGMENT}
_LIVE_STATES = ("active_allocated", "active_pending_free")


class Tracker:
    """What the trace holds of the history, across reads: the blocks it has
    live and, for a history that is not cleared, where the last read ended.
    Not thread-safe: the Recorder serializes reads."""

    def __init__(self):
        self.live = {}  # (device, addr) -> size of the block live there in the trace
        self.last = {}  # device -> (time_us of the last event read, events read at it)
        self.recovered = self.inferred = 0  # totals over the reads

    def read(self, snapshot, clock_offset_ns, segments=False, cleared=False, max_entries=None):
        """The storage events of a snapshot not read before, in time order:
        a list of tuples (ts_ns, is_free, kind, device, stream, addr, size,
        frames), frames a tuple of (filename, name, line), innermost first.
        cleared: the history was cleared after the last read (every event
        is new). Returns (events, info): info has recovered (live blocks
        whose alloc the history lost), inferred (frees it lost), wrapped
        (the history was full: events before its oldest one may be gone),
        entries (the longest device trace) and first_us."""
        out, synth = [], []
        wrapped, entries, first_us = False, 0, None
        for device, trace in enumerate(snapshot.get("device_traces") or ()):
            trace = trace or ()
            entries = max(entries, len(trace))
            last_us, last_k = self.last.get(device, (None, 0))
            overlap = False  # an event already read is still there: nothing between was lost
            k_at = 0
            newest = (last_us, last_k)
            for e in trace:
                t_us = int(e.get("time_us") or 0)
                if not cleared and last_us is not None:
                    if t_us < last_us:
                        overlap = True
                        continue
                    if t_us == last_us:
                        overlap = True
                        k_at += 1
                        if k_at <= last_k:
                            continue
                newest = (t_us, newest[1] + 1) if t_us == newest[0] else (t_us, 1)
                action = e.get("action")
                kind = _ALLOC.get(action)
                is_free = False
                if kind is None:
                    kind = _FREE.get(action)
                    is_free = True
                if kind is None or (kind == KIND_CUDA_SEGMENT and not segments):
                    continue
                if first_us is None or t_us < first_us:
                    first_us = t_us
                addr, size = int(e.get("addr") or 0), int(e.get("size") or 0)
                ts = t_us * 1000 - clock_offset_ns
                if kind == KIND_CUDA:
                    key = (device, addr)
                    if is_free:
                        if self.live.pop(key, None) is None:
                            continue  # its alloc is not in the trace: nothing to free
                    else:
                        if key in self.live:  # the block there before: its free was lost
                            self.inferred += 1
                            out.append((ts, True, KIND_CUDA, device, 0, addr, 0, ()))
                        self.live[key] = size
                stream = int(e.get("stream") or 0)
                out.append((ts, is_free, kind, device, stream, addr, size, _frames(e.get("frames"))))
            self.last[device] = newest
            if max_entries and len(trace) >= max_entries and (cleared or not overlap):
                wrapped = True
        # Reconcile with the segments: the live set is the snapshot's.
        base_ns = (first_us * 1000 - clock_offset_ns) if first_us is not None else time.monotonic_ns()
        now_live = {}
        for seg in snapshot.get("segments") or ():
            device = int(seg.get("device") or 0)
            for b in seg.get("blocks") or ():
                if b.get("state") in _LIVE_STATES:
                    now_live[(device, int(b.get("address") or 0))] = (seg, b)
        recovered = inferred = 0
        # the history's size is the request (a block's requested_size)
        def req(b):
            return int(b.get("requested_size") or b.get("size") or 0)

        # gone, or another block at that address (a lost free and alloc)
        for key in [k for k, n in self.live.items() if k not in now_live or req(now_live[k][1]) != n]:
            del self.live[key]
            inferred += 1
            synth.append((base_ns, True, KIND_CUDA, key[0], 0, key[1], 0, ()))
        for key, (seg, b) in now_live.items():
            if key in self.live:
                continue
            self.live[key] = req(b)
            recovered += 1
            frames = b.get("frames")
            if frames is None and b.get("history"):  # torch 1.13
                frames = b["history"][-1].get("frames")
            synth.append((base_ns, False, KIND_CUDA, key[0], int(seg.get("stream") or 0), key[1],
                          req(b), _frames(frames)))
        self.recovered += recovered
        self.inferred += inferred
        evs = synth + out
        evs.sort(key=lambda ev: ev[0])  # stable: same-time events keep their order
        return evs, {"recovered": recovered, "inferred": inferred, "wrapped": wrapped,
                     "entries": entries, "first_us": first_us}


def events(snapshot, clock_offset_ns, segments=False):
    """All storage events of one snapshot (the offline fixture's path):
    Tracker.read's events, and the number of live blocks recovered."""
    evs, info = Tracker().read(snapshot, clock_offset_ns, segments=segments)
    return evs, info["recovered"]


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


def drain_period():
    """TENSORLEAK_CUDA_DRAIN in seconds (0: read at report points only)."""
    try:
        s = float(os.environ.get("TENSORLEAK_CUDA_DRAIN", DEFAULT_DRAIN_S))
    except ValueError:
        s = DEFAULT_DRAIN_S
    return s if s > 0 else 0.0


class Recorder:
    """The live path: starts torch's history recording when CUDA first
    initializes, and drains new events into the trace at report points and
    periodically (tick)."""

    MAX_NOTES = 5  # wrap notes written while running; the report point's says the totals

    def __init__(self, api, note):
        self.api = api
        self.note = note
        self.torch = None
        self.started = False
        self.tracker = Tracker()
        self.feeder = None
        self.pid = None  # the process that started the history
        self.record = None  # torch's _record_memory_history, as found at start
        self.kwargs = None  # the arguments it was started with (torch >= 2.1)
        self.clear = False  # clear the history after each read
        self.user_owned = False  # the program called _record_memory_history itself
        self.lock = threading.Lock()
        self.base_period = drain_period()
        self.period = self.base_period
        self.due = 0.0
        self.notes = 0
        self.wraps = 0

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
            memory = self.torch.cuda.memory
            record = memory._record_memory_history
            n = history_entries()
            import inspect

            params = inspect.signature(record).parameters
            if "max_entries" in params:  # torch >= 2.1
                self.kwargs = {"enabled": "all", "stacks": "python", "max_entries": n}
                if "skip_actions" in params:  # ours are alloc and free_completed
                    self.kwargs["skip_actions"] = ["free_requested"]
                record(**self.kwargs)
                self.clear = "clear_history" in params
            elif "trace_alloc_max_entries" in params:  # torch 2.0
                record(True, record_context=True, trace_alloc_max_entries=n, trace_alloc_record_context=True)
            else:  # torch 1.13: the live blocks' frames only, no history
                record(True)
            self.record = record
            self.started = True
            self.pid = os.getpid()
            self._watch_user(memory, record)
            if self.base_period:
                import gc

                self.due = time.monotonic() + self.period
                gc.callbacks.append(self._on_gc)
        except Exception as exc:
            self.note(f"CUDA storages not recorded: {type(exc).__name__}: {exc}"[:250])

    def _watch_user(self, memory, record):
        """A program that records the history itself owns it from then on:
        we stop clearing it (its snapshots must see what it asked for)."""
        rec = self

        def _record_memory_history(*args, **kwargs):
            rec.user_owned = True
            return record(*args, **kwargs)

        for attr in ("__doc__", "__name__", "__qualname__", "__module__"):
            try:
                setattr(_record_memory_history, attr, getattr(record, attr))
            except (AttributeError, TypeError):
                pass
        _record_memory_history.__wrapped__ = record
        memory._record_memory_history = _record_memory_history

    def stop(self):
        """No more periodic drains (the end point was taken: the interpreter
        tears torch down after it)."""
        self.base_period = 0
        try:
            import gc

            gc.callbacks.remove(self._on_gc)
        except ValueError:
            pass

    def _on_gc(self, phase, info):
        if phase == "start":
            self.tick()

    def tick(self):
        """A drain when one is due: cheap otherwise (one clock read)."""
        if not self.base_period or time.monotonic() < self.due:
            return
        try:
            self.drain(wait=False)
        except Exception as exc:
            self.due = float("inf")  # not again: a note, and the report points still read
            self.note(f"CUDA storages not read while running: {type(exc).__name__}: {exc}"[:250])

    def drain(self, point=False, wait=True):
        """Converts the history since the last drain into trace records.
        point: at a report point (its note says what the reads lost so
        far). wait=False: give up when another thread is draining."""
        # A fork child (a DataLoader worker) must not touch CUDA: its
        # parent's history is the parent's to report.
        if not self.started or self.pid != os.getpid():
            return 0
        if not self.lock.acquire(blocking=wait):
            return 0
        try:
            return self._drain(point)
        finally:
            self.lock.release()

    def _drain(self, point):
        snapshot = self.torch.cuda.memory._snapshot()
        clear = self.clear and not self.user_owned
        cleared = getattr(self, "_cleared_once", False) and clear
        if clear:
            self.record(**dict(self.kwargs, clear_history=True))
            self._cleared_once = True
        offset = time.time_ns() - time.monotonic_ns()
        n_max = history_entries()
        evs, info = self.tracker.read(snapshot, offset, segments=False, cleared=cleared, max_entries=n_max)
        if self.feeder is None:
            self.feeder = Feeder(self.api)
        n = self.feeder.feed(evs)
        if self.base_period:
            if info["entries"] > n_max // 2:
                self.period = max(self.period / 2, MIN_DRAIN_S)
            elif info["entries"] < n_max // 8:
                self.period = min(self.period * 2, self.base_period)
            self.due = time.monotonic() + self.period
        lost = info["wrapped"] or info["recovered"] or info["inferred"]
        self.wraps += bool(info["wrapped"])
        if point and (self.wraps or self.tracker.recovered or self.tracker.inferred):
            self.note(
                f"CUDA history ({n_max} entries) wrapped in {self.wraps} of its reads: blocks allocated and"
                f" freed before the oldest kept event of such a read are missing (a peak there may be missed);"
                f" {self.tracker.recovered} live blocks recovered from the snapshot's segments and"
                f" {self.tracker.inferred} lost frees inferred, timed at that event"
            )
        elif lost and self.notes < self.MAX_NOTES:
            self.notes += 1
            when = "wrapped" if info["wrapped"] else "lost events"
            self.note(
                f"CUDA history {when} between two reads ({n_max} entries): {info['recovered']} live blocks"
                f" recovered from the snapshot's segments, {info['inferred']} frees inferred"
            )
        return n
