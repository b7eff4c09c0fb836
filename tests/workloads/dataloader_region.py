"""A DataLoader (num_workers=2, fork) over 12 rows for 3 epochs, whose
training loop in the main process runs each batch in region "step";
each worker's dataset runs each row in region "item". argv[1]: none
(keeps nothing), main (the step keeps a 4 KiB tensor in a list), worker
(the item keeps a 1 KiB copy of its row in a module-level list)."""
import sys

import tensorleak
import torch
from torch.utils.data import DataLoader, TensorDataset

HOW = sys.argv[1]
kept = []


class Items(TensorDataset):
    def __getitem__(self, i):
        with tensorleak.region("item"):
            x, y = super().__getitem__(i)
            if HOW == "worker":
                kept.append(x.repeat(128))  # SITE:worker_leak
        return x, y


ds = Items(torch.arange(24, dtype=torch.float32).reshape(12, 2), torch.arange(12))
loader = DataLoader(ds, batch_size=4, num_workers=2)
for epoch in range(3):
    for x, y in loader:
        with tensorleak.region("step"):
            s = x.sum()
            if HOW == "main":
                kept.append(torch.ones(1024))  # SITE:main_leak
print("ok", len(kept))
