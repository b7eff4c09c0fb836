# pool_cache.py - a multiprocessing Pool of 2 workers (start method
# argv[1]: spawn or forkserver) whose task caches a 1 MiB tensor per call
# in a module-level dict, never emptied: 8 tasks, 8 MiB kept across the
# workers until they end (issue 24: holders named per worker).
# tests/integration/report_pool.sh.
import multiprocessing as mp
import sys

import torch

_cache = {}


def task(i):
    _cache[i] = torch.full((256, 1024), float(i))  # SITE:cache
    return i


if __name__ == "__main__":
    pool = mp.get_context(sys.argv[1]).Pool(2)
    print("sum", sum(pool.map(task, range(8), chunksize=1)))
    pool.close()
    pool.join()
