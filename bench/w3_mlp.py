"""W3: a small PyTorch CPU training loop (issue 5).

usage: /usr/bin/python3 w3_mlp.py [STEPS]   (default 1000)
A 128->256->10 MLP, batch 64, SGD with momentum, one thread, seed 0: small
enough that per-op work (dispatch, allocation of the many small tensors of
each step) dominates, not BLAS. Prints the training loop's own time as
"bench: inner_s=S" so the harness can report it apart from the torch import.
"""
import sys
import time

import torch

steps = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
torch.set_num_threads(1)
torch.manual_seed(0)

model = torch.nn.Sequential(
    torch.nn.Linear(128, 256),
    torch.nn.ReLU(),
    torch.nn.Linear(256, 10),
)
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()
xs = torch.randn(16, 64, 128)
ys = torch.randint(0, 10, (16, 64))

t0 = time.perf_counter()
for step in range(steps):
    x = xs[step % 16]
    y = ys[step % 16]
    opt.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
inner = time.perf_counter() - t0
print(f"bench: inner_s={inner:.6f} loss={loss.item():.4f}")
