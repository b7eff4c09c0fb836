# train_mlp.py - a small real PyTorch training loop with two classic memory
# mistakes, the bundled workload of README's first command.
#
#   1. The validation loss is kept as a tensor (`val_history.append(val_loss)`)
#      outside torch.no_grad(): each kept loss holds its autograd graph, and
#      the graph holds the activations saved for backward (PyTorch FAQ:
#      "Don't accumulate history across your training loop"). Fix:
#      `val_loss.item()`, or validate under `torch.no_grad()`.
#   2. `first_rows.append(batch[:1])` keeps a 1-row view of each batch, which
#      pins the whole batch storage. Fix: `batch[:1].clone()`.
#
# Deterministic, CPU only, a few seconds.
import torch
from torch import nn

torch.manual_seed(0)
torch.set_num_threads(1)

model = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
loss_fn = nn.CrossEntropyLoss()
val_x = torch.randn(1024, 128)
val_y = torch.randint(0, 10, (1024,))

val_history = []
first_rows = []
for step in range(200):
    batch = torch.randn(256, 128)
    target = torch.randint(0, 10, (256,))
    opt.zero_grad()
    loss = loss_fn(model(batch), target)
    loss.backward()
    opt.step()
    if step % 50 == 0:
        first_rows.append(batch[:1])  # mistake 2: a view pins the batch
        val_loss = loss_fn(model(val_x), val_y)  # mistake 1: builds a graph ...
        val_history.append(val_loss)  # ... and keeps it alive

print(f"train_mlp: {len(val_history)} validation losses kept, last {val_loss.item():.4f}")
