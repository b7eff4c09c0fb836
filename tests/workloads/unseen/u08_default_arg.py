# u08: a mutable default argument memoises tensors across calls.
import torch
torch.set_num_threads(1)

def embed(i, _memo={}):
    if i not in _memo:
        _memo[i] = torch.zeros(128, 1024)  # SITE:memo
    return _memo[i]

for i in range(3):
    embed(i)  # SITE:call
print("u08 done")
