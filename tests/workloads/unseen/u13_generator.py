# u13: a generator suspended at a yield keeps its tensor local.
import torch
torch.set_num_threads(1)

def batches():
    big = torch.zeros(512, 512)  # SITE:big
    for i in range(10):
        yield big[i].sum()

gen = batches()
next(gen)  # SITE:call
print("u13 done")
