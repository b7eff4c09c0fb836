# mp_queue_pinned.py - tensors passed through a torch.multiprocessing queue
# (issue 24 item 1): the consumer is started before the producer, so a run
# report that takes the processes in order meets the consumer's problems
# before the process that made the segments. The producer moves 4 tensors
# of 1 MiB to shared memory with share_memory_() and puts them on the queue;
# the consumer keeps a 64-byte view of each in a module-level list, so all
# 4 stay mapped until it ends.
# tests/integration/report_shared.sh.
import torch
import torch.multiprocessing as mp

N = 4
kept = []  # the consumer's: module state, alive until its process ends


def consume(q, done):
    for _ in range(N):
        t = q.get()
        kept.append(t[:16])  # SITE:view
        del t
    done.set()
    print("consumer kept", len(kept), flush=True)


def produce(q, done):
    for i in range(N):
        t = torch.full((256, 1024), float(i))
        t.share_memory_()  # SITE:share
        q.put(t)
    done.wait()  # the consumer has taken every descriptor


if __name__ == "__main__":
    mp.set_start_method("fork")
    q, done = mp.Queue(), mp.Event()
    consumer = mp.Process(target=consume, args=(q, done))
    consumer.start()
    producer = mp.Process(target=produce, args=(q, done))
    producer.start()
    consumer.join()
    producer.join()
    print("exit codes", consumer.exitcode, producer.exitcode)
