# u04: two user objects refer to each other and each holds a tensor; both
# names are deleted: only the cycle holds the tensors (gc disabled).
import gc
import torch
gc.disable()
torch.set_num_threads(1)

class Peer:
    def __init__(self, n):
        self.state = torch.zeros(n)  # SITE:state
        self.other = None

a = Peer(262144)  # SITE:a
b = Peer(131072)  # SITE:b
a.other, b.other = b, a
del a, b
print("u04 done")
