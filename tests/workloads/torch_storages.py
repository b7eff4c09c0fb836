# torch_storages.py - storages with known sizes (tests/integration/run_torch.sh).
#   a: 1000 float32          ->   4000 B, alive at end
#   b: 256x256 float32       -> 262144 B, freed (del b)
#   c: b.clone()             -> 262144 B, alive at end (site: clone)
#   d: 10 float64            ->     80 B, alive at end
# Storages: 4, 528368 B allocated in all; peak of live storage bytes 528288 B
# (a + b + c); live at the end of the script 266224 B in 3 storages.
import torch

torch.set_num_threads(1)
a = torch.empty(1000)  # SITE:empty
b = torch.zeros(256, 256)  # SITE:zeros
c = b.clone()  # SITE:clone
del b
d = torch.ones(10, dtype=torch.float64)  # SITE:ones
print("torch_storages:", a.numel() + c.numel() + d.numel())
