# train_noleak.py - a small training loop that leaks nothing: what it keeps
# (the model, the optimizer, the input) is held by module globals, so
# `tensorleak check --max-leak=0` passes (tests/integration/check_leak_kinds.sh).
# With a number of steps as argument it runs that many (the one-time caches
# torch makes are the same after 1 step or 100).
import sys

import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x = torch.randn(32, 16)
for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    opt.zero_grad()
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
print("loss", loss.item())
