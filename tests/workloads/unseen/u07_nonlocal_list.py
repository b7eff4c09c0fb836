# u07: a closure appends to a nonlocal list; the returned callback is kept.
import torch
torch.set_num_threads(1)

def make_logger():
    seen = []
    def log(t):
        nonlocal seen
        seen = seen + [t.detach() * 1]  # SITE:keep
    return log

logger = make_logger()
for i in range(2):
    logger(torch.ones(256, 512))  # SITE:input
print("u07 done")
