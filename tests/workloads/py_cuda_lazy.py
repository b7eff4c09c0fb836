"""py_cuda_lazy.py - under the agent, on a machine without CUDA: importing
torch does not initialize CUDA (tensorleak only queues its start behind
torch's lazy init), a fork still works, and when CUDA does initialize (here:
torch's queued calls run by hand, as torch.cuda._lazy_init runs them) the
history recording starts with tensorleak's arguments; at the end the
(mocked) snapshot is drained into the trace.
Prints one line per fact; exits 0 when all hold, 1 otherwise."""
import inspect
import os
import pickle
import sys
import time

import torch

ok = True


def fact(cond, text):
    global ok
    ok &= bool(cond)
    print(("ok: " if cond else "NOT: ") + text)


fact(not torch.cuda.is_initialized(), "CUDA not initialized after import")
queued = [fn for fn, _ in torch.cuda._queued_calls if getattr(fn, "__self__", None).__class__.__name__ == "Recorder"]
expect = os.environ.get("TENSORLEAK_CUDA", "1") != "0"
fact(len(queued) == (1 if expect else 0), f"{len(queued)} start queued behind torch's lazy init")

pid = os.fork()
if pid == 0:
    torch.zeros(4)
    os._exit(7)
_, status = os.waitpid(pid, 0)
fact(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 7, "a fork after import works")
fact(not torch.cuda.is_initialized(), "CUDA still not initialized")

calls = []


def fake_record(*args, **kwargs):
    calls.append((args, kwargs))


with open(sys.argv[1], "rb") as f:
    snap = pickle.load(f)
# Re-time the GPU run's history to end now (the live path's clock: epoch us).
shift = time.time_ns() // 1000 - max(e["time_us"] for tr in snap["device_traces"] for e in tr) - 1000
for tr in snap["device_traces"]:
    for e in tr:
        e["time_us"] += shift
real_record = torch.cuda.memory._record_memory_history
fake_record.__signature__ = inspect.signature(real_record)  # what tensorleak inspects
torch.cuda.memory._record_memory_history = fake_record
torch.cuda.memory._snapshot = lambda: snap
for fn in queued:  # what torch.cuda._lazy_init does with _queued_calls
    fn()
if expect:
    fact(len(calls) == 1, f"{len(calls)} call to _record_memory_history")
    args, kwargs = calls[0] if calls else ((), {})
    params = inspect.signature(real_record).parameters
    if "max_entries" in params:  # torch >= 2.1
        want = ((), {"enabled": "all", "stacks": "python", "max_entries": 100000})
        if "skip_actions" in params:  # newer torch: tensorleak reads no free_requested
            want[1]["skip_actions"] = ["free_requested"]
    elif "trace_alloc_max_entries" in params:  # torch 2.0
        want = ((True,), {"record_context": True, "trace_alloc_max_entries": 100000,
                          "trace_alloc_record_context": True})
    else:  # torch 1.13
        want = ((True,), {})
    fact((args, kwargs) == want, f"arguments {args} {kwargs}")
print("py_cuda_lazy: done")
sys.exit(0 if ok else 1)
