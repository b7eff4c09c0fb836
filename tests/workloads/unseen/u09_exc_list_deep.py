# u09: caught exceptions kept in a list; the raise is two calls deep and the
# tensor is a local of the outer callee (tb_next chain).
import torch
torch.set_num_threads(1)

def check(t):
    raise RuntimeError("bad batch")

def process(i):
    batch = torch.zeros(256, 1024)  # SITE:batch
    check(batch)

errors = []
for i in range(2):
    try:
        process(i)  # SITE:call
    except RuntimeError as e:
        errors.append(e)  # SITE:keep
print("u09 done")
