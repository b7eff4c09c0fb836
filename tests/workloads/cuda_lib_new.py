"""cuda_lib_new.py - under PyTorch (a CPU storage made first: from then on
the agent gives C++ new'd blocks full stacks), two libraries new 1000 small
blocks each: argv[1] (56 B blocks) and argv[2] (48 B blocks).
Prints one line."""
import ctypes
import sys

import torch

x = torch.empty(1000)
for path, size in ((sys.argv[1], 56), (sys.argv[2], 48)):
    ctypes.CDLL(path).churn(1000, ctypes.c_size_t(size))
print("cuda_lib_new: done")
