# u18: a tensor made by torch.from_numpy of a big array, sliced, keeps the array.
import numpy as np
import torch
torch.set_num_threads(1)

def rows():
    arr = np.zeros((1024, 512), dtype=np.float64)  # SITE:array
    t = torch.from_numpy(arr)  # SITE:wrap
    return t[:4]  # SITE:view

r = rows()  # SITE:call
print("u18 done")
