"""py_cuda_snapshot.py - feed a pickled torch.cuda.memory._snapshot() (the
fixture of a real GPU run) through tensorleak's converter into the trace of
this process, as the live path does at a report point; no torch needed.
Usage: python3 py_cuda_snapshot.py SNAPSHOT.pickle"""
import pickle
import sys
import time

from tensorleak import _agent, _cuda

with open(sys.argv[1], "rb") as f:
    snap = pickle.load(f)
api = _agent.api()
if api is None or not _agent.has(api, "device_free"):
    sys.exit("py_cuda_snapshot: no agent")
# The snapshot's last event goes 1 ms before now (docs: "Time").
last_us = max(e["time_us"] for tr in snap["device_traces"] for e in tr)
offset = last_us * 1000 - (time.monotonic_ns() - 1000000)
evs, recovered = _cuda.events(snap, offset, segments=True)
n = _cuda.Feeder(api).feed(evs)
print(f"py_cuda_snapshot: {n} events, {recovered} recovered")
