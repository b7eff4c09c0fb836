# u02: a forward pre-hook defined inside __init__ refers to self (its module):
# module -> _forward_pre_hooks -> hook -> cell -> module; the module is dropped.
import gc
import torch
gc.disable()
torch.set_num_threads(1)

class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("table", torch.zeros(1024, 256))  # SITE:buffer
        def pre(mod, args):
            self.calls = getattr(self, "calls", 0) + 1
        self.register_forward_pre_hook(pre)

    def forward(self, x):
        return x

def build():
    b = Block()  # SITE:call
    b(torch.ones(1))
    return 0

build()
print("u02 done")
