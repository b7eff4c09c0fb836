# checkpoint_calls.py - a block under non-reentrant torch.utils.checkpoint
# whose graph is still alive at the end point (checkpoint_calls.sh): reading
# its saved tensors would run the checkpoint's unpack hook, which recomputes
# the block. Each call of block() appends a line to $CALLS_LOG. With
# END=drop the graph is dropped on the last line (the same allocations, the
# same peak: what the program makes without an end point that recomputes).
import os
import torch
from torch.utils.checkpoint import checkpoint

LOG = os.environ["CALLS_LOG"]
torch.manual_seed(0)
torch.set_num_threads(1)
lin = torch.nn.Linear(512, 512)


def block(x):
    with open(LOG, "a") as f:
        f.write("block\n")
    return torch.relu(lin(x)) * 2


x = torch.randn(256, 512, requires_grad=True)
y = checkpoint(block, x, use_reentrant=False)
loss = y.sum()
if os.environ.get("END") == "drop":
    del y, loss
