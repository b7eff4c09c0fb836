# py_term.py - a forked multiprocessing worker that its parent terminates
# (SIGTERM at its default action) while it holds a 12 MiB tensor
# (run_workers.sh). The output must be the same with and without the agent.
import multiprocessing as mp
import signal
import time

import torch

N = 3 * 1024 * 1024  # float32 elements: 12 MiB
CACHE = []


def worker(q):
    big = torch.ones(N)  # SITE:term_big
    CACHE.append(big[0:2])
    q.put(f"worker sees SIGTERM {signal.getsignal(signal.SIGTERM)}")
    time.sleep(60)


def main():
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=worker, args=(q,))
    p.start()
    print(q.get())
    p.terminate()
    p.join()
    print(f"exit {p.exitcode}")


if __name__ == "__main__":
    main()
