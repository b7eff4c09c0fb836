# test_train.py - the CI acceptance test file (tests/integration/pytest_losses.sh):
# a training helper logs each step's loss *tensor* into a module-level
# history, so each step's autograd graph and saved activations outlive the
# test. CHECK_LOSSES_FIXED=1 logs loss.item() instead.
import os

import torch

FIXED = os.environ.get("CHECK_LOSSES_FIXED") == "1"
HISTORY = []


def train_steps(steps):
    torch.manual_seed(0)
    torch.set_num_threads(1)
    model = torch.nn.Sequential(torch.nn.Linear(16, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 4))
    x = torch.randn(256, 16)
    for _ in range(steps):
        loss = model(x).pow(2).mean()  # SITE:loss
        HISTORY.append(loss.item() if FIXED else loss)  # SITE:keep


def test_train():
    train_steps(4)
    assert len(HISTORY) == 4


def test_small():
    assert sum(range(4)) == 6
