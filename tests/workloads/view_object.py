"""view_object.py - the C++ news that the default mode records in full are
those of a TensorImpl's size class (tests/integration/agent_view_object.sh):
the package names a TensorImpl to the agent when torch is imported
(include/tensorleak.h, view_object). The training steps make autograd nodes
and vectors of other sizes, which are sampled; the slice kept at each step
must still name its line. Prints the probe tensor's TensorImpl address and
usable size, then n."""
import ctypes
import sys

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
libc = ctypes.CDLL(None)
libc.malloc_usable_size.restype = ctypes.c_size_t
# A storage first, of a size nothing else has: the test checks the records
# after it (the package named a TensorImpl at torch's import, before it).
# From a storage on, the default mode records news in full (record.h).
marker = torch.empty(12347, dtype=torch.uint8)
probe = torch.empty(1)
print(f"impl {probe._cdata:#x} {libc.malloc_usable_size(ctypes.c_void_p(probe._cdata))}")
w = torch.randn(64, 64, requires_grad=True)
big = torch.zeros(256, 1024)  # SITE:big
keep = []
for i in range(n):
    loss = (w @ w).relu().sum()
    loss.backward()
    keep.append(big[i])  # SITE:view
print(n)
