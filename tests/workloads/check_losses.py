# check_losses.py - the CI acceptance loop (tests/integration/check_losses.sh):
# a training loop keeps each step's loss *tensor* in a module-level list, so
# every step's autograd graph and the activations it saved stay alive.
# With the argument "fixed" it keeps loss.item() instead, and nothing of the
# loop outlives train(). With "regions" each step is a tensorleak region.
import contextlib
import sys

import torch

torch.manual_seed(0)
torch.set_num_threads(1)
FIXED = "fixed" in sys.argv[1:]
if "regions" in sys.argv[1:]:
    import tensorleak

    step = tensorleak.region
else:
    step = lambda name: contextlib.nullcontext()  # noqa: E731
STEPS = 4
losses = []


def train(steps):
    model = torch.nn.Sequential(torch.nn.Linear(16, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 4))
    x = torch.randn(256, 16)
    for _ in range(steps):
        with step("step"):
            loss = model(x).pow(2).mean()  # SITE:loss
            losses.append(loss.item() if FIXED else loss)  # SITE:keep


train(STEPS)
print("check_losses: kept", len(losses), "losses")
