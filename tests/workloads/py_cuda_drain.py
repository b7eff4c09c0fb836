"""py_cuda_drain.py - the live path's periodic drain of PyTorch's CUDA
allocator history, without torch or a GPU: a fake torch.cuda.memory whose
history is a ring of max_entries (as torch's: the oldest entry goes when it
is full; cleared by clear_history; free_requested left out by skip_actions)
replays a real GPU run's events (the fixture's snapshot) a chunk at a time,
with the snapshot's segments holding the blocks live then. Between chunks
the program sleeps a little and runs gc.collect(): tensorleak's gc callback
drains when due (TENSORLEAK_CUDA_DRAIN).
Usage: py_cuda_drain.py SNAPSHOT.pickle clear|noclear CHUNK
(noclear: torch 2.1-2.5's signature, no clear_history nor skip_actions).
Prints the run's true totals for the test to compare with the report."""
import gc
import inspect
import pickle
import sys
import time
import types

from tensorleak import _boot

with open(sys.argv[1], "rb") as f:
    snap = pickle.load(f)
mode, chunk = sys.argv[2], int(sys.argv[3])
EVENTS = [dict(e) for e in snap["device_traces"][0]]
BLOCK_FRAMES = {}  # addr -> frames of its last alloc
ring, live = [], {}
state = {"cursor": 0, "max": sys.maxsize, "skip": (), "calls": 0, "t_us": 0}


def record(enabled="all", context="all", stacks="all", max_entries=sys.maxsize, device=None,
           clear_history=False, compile_context=False, global_record_annotations=False, skip_actions=None):
    state["calls"] += 1
    state["max"], state["skip"] = max_entries, tuple(skip_actions or ())
    if clear_history:
        ring.clear()


def record_noclear(enabled="all", context="all", stacks="all", max_entries=sys.maxsize, device=None):
    state["calls"] += 1
    state["max"] = max_entries


def advance(k):
    """k more events happen now (two per microsecond: equal times too)."""
    base = max(time.time_ns() // 1000, state["t_us"] + 1)
    for i, e in enumerate(EVENTS[state["cursor"]:state["cursor"] + k]):
        e = dict(e, time_us=base + i // 2)
        state["t_us"] = e["time_us"]
        if e["action"] == "alloc":
            live[e["addr"]] = e
        elif e["action"] == "free_completed":
            live.pop(e["addr"], None)
        if e["action"] in state["skip"]:
            continue
        ring.append(e)
        if len(ring) > state["max"]:
            del ring[0]
    state["cursor"] += k


def snapshot():
    blocks = [{"address": a, "size": -(-e["size"] // 512) * 512, "requested_size": e["size"],
               "state": "active_allocated",
               "frames": e["frames"]} for a, e in sorted(live.items())]
    seg = {"device": 0, "stream": 0, "address": 0, "total_size": 1 << 40, "segment_type": "large",
           "blocks": blocks}
    return {"segments": [seg], "device_traces": [list(ring)]}


memory = types.SimpleNamespace(_record_memory_history=record if mode == "clear" else record_noclear,
                               _snapshot=snapshot)
cuda = types.SimpleNamespace(memory=memory, is_initialized=lambda: True, _lazy_call=lambda fn: fn())
torch = types.SimpleNamespace(cuda=cuda)
_boot._on_cuda(torch)  # as after `import torch` with CUDA already initialized

allocs = peak = cur = 0
sizes = {}
for e in EVENTS:  # the true answer: every alloc and free_completed
    if e["action"] == "alloc":
        allocs += 1
        sizes[e["addr"]] = e["size"]
        cur += e["size"]
        peak = max(peak, cur)
    elif e["action"] == "free_completed" and e["addr"] in sizes:
        cur -= sizes.pop(e["addr"])
while state["cursor"] < len(EVENTS):
    advance(chunk)
    time.sleep(0.02)
    gc.collect()
print(f"py_cuda_drain: {allocs} allocs, peak {peak}, live {len(sizes)} blocks {cur} B, "
      f"{state['calls']} record calls")
sys.stdout.flush()
