# u15: one column of a big matrix kept: a strided view pins the storage.
import torch
torch.set_num_threads(1)

def first_cols():
    m = torch.randn(2048, 512)  # SITE:matrix
    return m[:, 1:3]  # SITE:view

cols = first_cols()  # SITE:call
print("u15 done")
