# train_mlp.py - a small real PyTorch training loop with two classic memory
# mistakes, the bundled workload of README's first command.
#
#   1. `history.append(loss)` keeps every step's loss tensor, and with it the
#      step's autograd graph (PyTorch FAQ: "Don't accumulate history across
#      your training loop"); `loss.item()` is the fix.
#   2. `first_rows.append(batch[:1])` keeps a 1-row view of each 64 KiB batch,
#      which pins the whole batch storage; `batch[:1].clone()` is the fix.
#
# Deterministic, CPU only, a few seconds.
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)

model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.CrossEntropyLoss()

history = []
first_rows = []
for step in range(200):
    batch = torch.randn(128, 128)
    target = torch.randint(0, 10, (128,))
    opt.zero_grad()
    loss = loss_fn(model(batch), target)
    if step % 50 == 0:
        history.append(loss)  # mistake 1: keeps the graph alive
        first_rows.append(batch[:1])  # mistake 2: a view pins the batch
    loss.backward()
    opt.step()

print(f"train_mlp: {len(history)} losses kept, last {loss.item():.4f}")
