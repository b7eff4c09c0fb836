"""py_cuda_snapshot_loop.py - a long PyTorch CUDA run of constant live set,
made of a real GPU run's history: the pickled torch.cuda.memory._snapshot()
of the fixture fed through tensorleak's converter argv[2] times, one replay
after another, every storage and segment still live freed between two
(the last replay's stay live). No torch needed.
Usage: python3 py_cuda_snapshot_loop.py SNAPSHOT.pickle N"""
import pickle
import sys
import time

from tensorleak import _agent, _cuda

with open(sys.argv[1], "rb") as f:
    snap = pickle.load(f)
replays = int(sys.argv[2])
api = _agent.api()
if api is None or not _agent.has(api, "device_free"):
    sys.exit("py_cuda_snapshot_loop: no agent")
evs, _ = _cuda.events(snap, 0, segments=True)
first, last = min(e[0] for e in evs), max(e[0] for e in evs)
span = last - first + 1000000
# The last replay's last event goes 1 ms before now (docs: "Time").
end = time.monotonic_ns() - 1000000
feeder = _cuda.Feeder(api)
n = 0
for k in range(replays):
    shift = end - last - (replays - 1 - k) * span
    out, live = [], {}
    for ts, is_free, kind, device, stream, addr, size, frames in evs:
        out.append((ts + shift, is_free, kind, device, stream, addr, size, frames))
        if is_free:
            live.pop((kind, device, addr), None)
        else:
            live[(kind, device, addr)] = True
    if k < replays - 1:
        gone = last + shift + 1
        out += [(gone, True, kind, device, 0, addr, 0, ()) for kind, device, addr in live]
    n += feeder.feed(out)
print(f"py_cuda_snapshot_loop: {n} events")
