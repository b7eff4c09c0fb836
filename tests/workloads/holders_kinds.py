# holders_kinds.py - storages held in the ways holders_kinds.sh names: a class
# attribute, a closure, optimizer state and a parameter's .grad, a forward hook
# whose closure refers to its module (a reference cycle, gc disabled), a
# thread's frame, an lru_cache on a method.
import gc, threading, functools
import torch
gc.disable()
torch.set_num_threads(1)

class Cache:
    table = {}

Cache.table["emb"] = torch.randn(256, 1024)  # class attribute

def make():
    w = torch.randn(256, 1024)
    def f():
        return w.sum()
    return f
fn = make()  # closure

model = torch.nn.Linear(512, 512)
opt = torch.optim.Adam(model.parameters())
model(torch.randn(4, 512)).sum().backward()
opt.step()  # optimizer state

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(256, 1024)
        self.register_forward_hook(lambda m, i, o: self.lin)  # hook closure refers to its module

net = Net()
del net  # cycle: net -> _forward_hooks -> lambda -> cell -> net

stop = threading.Event()
ready = threading.Event()
def worker():
    buf = torch.randn(256, 1024)
    ready.set()
    stop.wait()
th = threading.Thread(target=worker, name="loader", daemon=True)
th.start(); ready.wait()

class Data:
    @functools.lru_cache(maxsize=None)
    def get(self, i):
        return torch.randn(256, 1024)
d = Data(); d.get(1)
