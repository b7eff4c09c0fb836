# u17: a numpy view of a torch tensor (t.numpy()[:2]) keeps the tensor's storage.
import torch
torch.set_num_threads(1)

def head():
    t = torch.zeros(1024, 1024)  # SITE:tensor
    return t.numpy()[:2]  # SITE:view

h = head()  # SITE:call
print("u17 done")
