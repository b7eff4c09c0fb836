# py_tensor_kinds.py - every kind of tensor the Python provider must not read
# alive at the end point, next to the host storages it must describe
# (tests/integration/py_tensor_kinds.sh). Runs on torch 1.13 and 2.x.
#
# Described (host memory, known owner): `dense` (2 MiB c10 storage, also
# viewed by `dense_view`) and `owned` (2 MiB numpy buffer).
# Described, host memory of another owner: `shared` (from_numpy) and
# `via_dlpack` (DLPack of a numpy array), numpy's buffers (fingerprinted:
# storages the agent recorded), `via_buffer` (frombuffer of a bytearray;
# 2.x: not fingerprinted, 1.13 cannot tell).
# Skipped and counted in the note: meta, sparse_coo, sparse_csr, quantized,
# nested, mkldnn (if built), a __torch_dispatch__ wrapper subclass, and a
# subclass whose __torch_function__ raises.
# No storage, nothing to say: torch.empty(0), a storage resized to 0.
#
# Then a report point by hand on a PROT_NONE mapping offered as a 2 MiB
# storage (a device pointer's stand-in) and on one whose last page only is
# PROT_NONE: the agent must read neither.
# argv[1]: file to write the host storages' addresses to (JSON).
import ctypes
import json
import mmap
import sys
import warnings

import numpy as np
import torch

MIB2 = 2 * 2**20
TB = getattr(torch._C, "TensorBase", None) or torch._C._TensorBase
storage = getattr(TB, "untyped_storage", None) or TB._storage


class Wrapper(torch.Tensor):
    """A wrapper subclass (as FakeTensor and device wrappers are): no storage."""

    @staticmethod
    def __new__(cls, inner):
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype,
                                                   device=inner.device)

    def __init__(self, inner):
        self.inner = inner

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        raise RuntimeError("Wrapper: no ops")


class Hostile(torch.Tensor):
    """Every torch call on it raises."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        raise RuntimeError("Hostile: no functions")


with warnings.catch_warnings():  # beta/deprecation warnings of torch itself
    warnings.simplefilter("ignore")
    dense = torch.ones(MIB2 // 4)
    dense_view = dense[: 1024]
    owned = np.ones(MIB2 // 8)
    shared = torch.from_numpy(np.full(MIB2 // 8, 3.0))
    via_buffer = torch.frombuffer(bytearray(MIB2), dtype=torch.uint8)
    via_dlpack = torch.from_dlpack(np.full(MIB2 // 8, 5.0))
    meta = torch.empty(MIB2, device="meta")
    coo = torch.eye(512).to_sparse()
    csr = torch.eye(512).to_sparse_csr()
    quantized = torch.quantize_per_tensor(torch.ones(MIB2 // 4), 0.1, 0, torch.quint8)
    nested = torch.nested.nested_tensor([torch.ones(1000), torch.ones(2000)])
    mkldnn = torch.ones(512, 512).to_mkldnn() if torch.backends.mkldnn.is_available() else None
    wrapper = Wrapper(torch.ones(64))
    hostile = torch.ones(4096).as_subclass(Hostile)
    empty = torch.empty(0)
    resized = torch.ones(4096)
    storage(resized).resize_(0)

host = {name: storage(t).data_ptr() for name, t in
        (("dense", dense), ("shared", shared), ("via_buffer", via_buffer),
         ("via_dlpack", via_dlpack))}
host["owned"] = owned.__array_interface__["data"][0]

# A report point by hand: a 2 MiB PROT_NONE mapping offered as a storage.
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                      ctypes.c_long]
noaccess = libc.mmap(None, MIB2, 0, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS, -1, 0)  # PROT_NONE
# readable but for its last page (as a file mapping past the file's end)
tail = libc.mmap(None, MIB2, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS,
                 -1, 0)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.mprotect(tail + MIB2 - mmap.PAGESIZE, mmap.PAGESIZE, 0)
try:
    from tensorleak import _agent  # on PYTHONPATH under the agent
    api = _agent.api()
except ImportError:
    api = None
if api is not None:
    snap = api.snapshot_begin(b"noaccess")
    api.snapshot_hold(snap, noaccess, MIB2, _agent.HELD_TENSOR, None)
    api.snapshot_hold(snap, tail, MIB2, _agent.HELD_TENSOR, None)
    api.snapshot_end(snap)
host["noaccess"], host["tail"] = noaccess, tail

with open(sys.argv[1], "w") as f:
    json.dump({"host": host, "mkldnn": mkldnn is not None, "torch": torch.__version__}, f)
print("py_tensor_kinds: done")
