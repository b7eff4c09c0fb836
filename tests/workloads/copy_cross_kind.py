# copy_cross_kind.py - copies across array kinds name their source
# (copy_cross_kind.sh): a tensor made from an ndarray and an ndarray made
# from a tensor, each 800,000 bytes, all kept to the end.
import numpy as np
import torch

a = np.ones(100000)  # SITE:a
t = torch.tensor(a)  # SITE:t
b = np.array(t)  # SITE:b
print("kinds", type(t).__name__, type(b).__name__, int(b.sum()))
