# dataloader_pinned.py - the commonest leak of a training job (issue 24
# item 1): a DataLoader with 2 workers (fork) makes 8 batches of 8 MiB
# (8 samples of 256 x 1024 float32) in shared memory, and the main script
# keeps a 64-byte view of each, batch[0, 0, :16], so all 8 stay mapped.
# tests/integration/report_shared.sh.
import sys

import torch
from torch.utils.data import DataLoader, Dataset

if sys.argv[1:] == ["file_system"]:  # the other sharing strategy: by file name
    torch.multiprocessing.set_sharing_strategy("file_system")


class Samples(Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        return torch.full((256, 1024), float(i))  # SITE:sample


kept = []
for batch in DataLoader(Samples(), batch_size=8, num_workers=2):  # SITE:loop
    kept.append(batch[0, 0, :16])  # SITE:view
print("batches", len(kept))
