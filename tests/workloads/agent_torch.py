# agent_torch.py - known PyTorch CPU storages for tests/integration/agent_torch.sh:
# 4000 B (empty 1000 float32), 800 B (zeros 10x10 float64, freed), a view
# (no storage), 4000 B (clone). Prints the data pointers it expects to see.
import torch

a = torch.empty(1000)
b = torch.zeros(10, 10, dtype=torch.float64)
v = a[10:20]
c = a.clone()
print("a", hex(a.data_ptr()))
print("b", hex(b.data_ptr()))
print("c", hex(c.data_ptr()))
del b
print("done", v.numel())
