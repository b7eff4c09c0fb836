# dataloader_stream.py - a DataLoader with 2 workers (fork) streams 16
# batches of 8 MiB (8 samples of 256 x 1024 float32) in shared memory, and
# the main loop keeps nothing of them: each batch is received (registered
# as a storage then), used and dropped (unmapped: unregistered then).
# tests/integration/report_shared.sh (issue 24: shared storages in the
# timeline before the end point).
import sys

import torch
from torch.utils.data import DataLoader, Dataset

if sys.argv[1:] == ["file_system"]:  # the other sharing strategy: by file name
    torch.multiprocessing.set_sharing_strategy("file_system")


class Samples(Dataset):
    def __len__(self):
        return 128

    def __getitem__(self, i):
        return torch.full((256, 1024), float(i))


total = 0.0
for batch in DataLoader(Samples(), batch_size=8, num_workers=2):  # SITE:loop
    total += float(batch[0, 0, 0])
del batch
print("total", total)
