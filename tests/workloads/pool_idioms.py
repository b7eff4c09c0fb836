# pool_idioms.py IDIOM [START] - the multiprocessing idioms of a clean
# program (tests/integration/check_pool_idioms.sh): each one frees all it
# allocates, so `tensorleak check --max-leak=0` must pass it. START is the
# start method (fork, spawn, forkserver; default fork).
#   with      with Pool(2) as p: p.map(...)   (leaving calls terminate():
#             SIGTERM to the workers)
#   close     Pool(2), map, close(), join()
#   executor  concurrent.futures.ProcessPoolExecutor(2)
#   loader    torch DataLoader, 2 persistent workers, 2 epochs
#   leaky     with Pool(2): each task mallocs 300000 bytes and drops the
#             pointer (definitely lost in the workers: must fail)
#   daemon    a forked child that outlives the program by 2 s, then frees
#             what it took and ends
import concurrent.futures
import ctypes
import multiprocessing
import os
import sys
import time


def work(i):
    data = [bytearray(1000 + i) for _ in range(50)]
    return sum(len(d) for d in data)


def leak(i):
    libc = ctypes.CDLL(None)
    libc.malloc.restype = None  # no Python int keeps the address (a scan root)
    libc.malloc(300000)  # SITE:leak
    return i


def loader():
    import torch
    from torch.utils.data import DataLoader, Dataset

    class Squares(Dataset):
        def __len__(self):
            return 16

        def __getitem__(self, i):
            return torch.full((64,), float(i * i))

    dl = DataLoader(Squares(), batch_size=4, num_workers=2, persistent_workers=True)
    total = 0.0
    for _ in range(2):
        for batch in dl:
            total += float(batch.sum())
    del dl
    return total


def main():
    idiom = sys.argv[1]
    start = sys.argv[2] if len(sys.argv) > 2 else "fork"
    ctx = multiprocessing.get_context(start)
    if idiom == "with":
        with ctx.Pool(2) as p:
            print(sum(p.map(work, range(8))))
    elif idiom == "close":
        p = ctx.Pool(2)
        print(sum(p.map(work, range(8))))
        p.close()
        p.join()
    elif idiom == "executor":
        with concurrent.futures.ProcessPoolExecutor(2, mp_context=ctx) as ex:
            print(sum(ex.map(work, range(8))))
    elif idiom == "loader":
        print(loader())
    elif idiom == "daemon":
        if os.fork() == 0:
            data = [bytearray(100000) for _ in range(4)]
            time.sleep(2)
            del data
            os._exit(0)
        print("parent done")
    elif idiom == "leaky":
        with ctx.Pool(2) as p:
            print(sum(p.map(leak, range(8))))
    else:
        sys.exit("unknown idiom " + idiom)


if __name__ == "__main__":
    main()
