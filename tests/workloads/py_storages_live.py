"""py_storages_live.py: the agent's storages_live answer (include/tensorleak.h)
and the report point's use of it (_holders._all_found), under the agent.

usage: python3 py_storages_live.py default|all
Prints one "ok ..." line per check and exits 0, or prints "FAIL: ..." and
exits 1. `all` mode: the agent does not know (-1).
"""
import ctypes
import gc
import os
import sys

import numpy as np
import torch

from tensorleak import _agent, _holders, _torch

mode = sys.argv[1]
api = _agent.api()
failed = []


def check(ok, what):
    print(("ok " if ok else "FAIL: ") + what)
    if not ok:
        failed.append(what)


def base(t):
    return _torch.storage_of(t)[0]


def live(bases=()):
    return _agent.storages_live(api, bases)


if mode == "all":
    a = torch.ones(1000)
    n, hit = live([base(a)])
    check((n, hit) == (-1, set()), f"all mode: {n}, {hit}: the agent does not know")
    sys.exit(1 if failed else 0)

n0, _ = live()
check(n0 == 0, f"{n0} storages live after import torch, numpy: none of the program's yet")
a = torch.ones(1000)  # 4000 B
b = torch.zeros(500)
v = a[10:20]  # a view: no storage of its own
arr = np.ones(3000)  # numpy's handler: a storage
shared = torch.from_numpy(arr)  # arr's buffer: no new storage
plain = ctypes.create_string_buffer(4096)  # a plain heap block
addr = ctypes.addressof(plain)
n, hit = live([base(a), base(b), base(v) + 40, addr, arr.ctypes.data, base(shared) + 0])
check(n == 3, f"{n} live storages after a, b, arr: want 3")
check(hit == {base(a), base(b), arr.ctypes.data},
      f"found {sorted(hit)}: want a's, b's and arr's base, not a view's inner address nor a plain block")
check(base(shared) == arr.ctypes.data, "from_numpy shares arr's storage")
del b
gc.collect()
n, hit = live([base(a), arr.ctypes.data])
check((n, len(hit)) == (2, 2), f"after del b: {n} live, {len(hit)} of a, arr found: want 2, 2")
del shared, arr
n, _ = live()
check(n == 1, f"after del arr and its tensor: {n} live, want 1")

# The report point's cycle search runs only when the walk missed a live
# storage: first every storage is reachable (a; none in a cycle), then a
# tensor only a reference cycle keeps.
from tensorleak import _cycles

calls = []
real = _cycles.search


def counted(*args):
    calls.append(1)
    return real(*args)


_cycles.search = counted
import tensorleak

tensorleak.snapshot("all_found")
check(not calls, f"all storages reachable: the cycle search ran {len(calls)} times, want 0")
gc.disable()
ring = {"t": torch.zeros(2000)}
ring["self"] = ring
print(f"ring storage {base(ring['t']):#x}")
ring = None
tensorleak.snapshot("in_a_cycle")
check(len(calls) == 1, f"one storage held by a cycle: the cycle search ran {len(calls)} times, want 1")
gc.enable()
gc.collect()

# A fork child inherits its parent's live storages, outside its own table.
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    n, hit = live([base(a)])
    os.write(w, f"{n} {len(hit)}".encode())
    os._exit(0)
os.close(w)
got = os.read(r, 100).decode()
os.waitpid(pid, 0)
check(got == "-1 0", f"fork child's answer {got!r}: want '-1 0' (its parent's a is not in its table)")
sys.exit(1 if failed else 0)
