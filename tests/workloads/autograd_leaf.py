# autograd_leaf.py - storages only an autograd graph keeps: a leaf (fed through
# AccumulateGrad) and an input saved for backward, both 1 MiB; the kept
# 4-byte result is held by a tensor.
import torch
def make():
    w = torch.randn(512, 512, requires_grad=True)  # SITE:leaf
    x = torch.randn(512, 512)  # SITE:saved
    return (x @ w).sum()
kept = make()
