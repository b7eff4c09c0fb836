"""fresh_jit.py - torch.jit.script of functions that call torch's copying
entry points, which tensorleak's default lineage mode wraps (fresh_jit.sh).
After scripting, a copy made from Python must still name its source."""
import torch


@torch.jit.script
def scripted(x: torch.Tensor) -> torch.Tensor:
    y = torch.flatten(x)
    z = torch.reshape(torch.clone(y), [-1])
    return z + torch.tensor([1.0]) + x.clone().sum()


x = torch.ones(2, 3)
print("scripted", scripted(x).tolist())
src = torch.ones(256, 256)
kept = torch.clone(src)
print("cloned", int(kept.sum().item()))
