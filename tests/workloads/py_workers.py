# py_workers.py - forked workers that end through os._exit (run_workers.sh).
# A DataLoader with two fork-started workers and one multiprocessing.Process
# each allocate a 12 MiB float32 tensor and cache an 8-byte slice of it: in
# each worker's trace the 12 MiB storage is pinned by that view, held by the
# cache. The main script keeps nothing big.
import multiprocessing as mp
import sys

import torch
from torch.utils.data import DataLoader, Dataset

N = 3 * 1024 * 1024  # float32 elements: 12 MiB


class Cached(Dataset):
    def __init__(self):
        self.cache = []

    def __len__(self):
        return 4

    def __getitem__(self, i):
        if not self.cache:
            big = torch.ones(N)  # SITE:worker_big
            self.cache.append(big[0:2])  # SITE:worker_view
        return torch.tensor([i])


CACHE = []  # the multiprocessing worker's cache (a module global)


def proc_main(q):
    big = torch.ones(N)  # SITE:proc_big
    CACHE.append(big[0:2])  # SITE:proc_view
    q.put("done")


def main():
    ctx = mp.get_context("fork")
    loader = DataLoader(Cached(), batch_size=1, num_workers=2, multiprocessing_context=ctx)
    got = sorted(int(b) for b in loader)
    q = ctx.Queue()
    p = ctx.Process(target=proc_main, args=(q,))
    p.start()
    msg = q.get()
    p.join()
    print(f"batches {got} process {msg} exit {p.exitcode}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
