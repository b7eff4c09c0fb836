# grad_cycle.py - backward(create_graph=True) leaves a leaf and its .grad in a
# reference cycle through autograd's C++ graph (tests/integration/grad_cycle.sh).
import warnings

import torch

warnings.simplefilter("ignore")  # torch's own warning about this very cycle


def step():
    x = torch.randn(1 << 20, requires_grad=True)  # SITE:leaf
    y = (x ** 3).sum()
    y.backward(create_graph=True)  # SITE:grad


step()
print("grad_cycle: done")
