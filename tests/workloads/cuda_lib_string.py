"""cuda_lib_string.py - under PyTorch (a CPU storage made first: from then
on the agent gives C++ new'd blocks full stacks), two libraries grow 1000
std::strings and std::vectors each: argv[1] and argv[2]. Prints one line."""
import ctypes
import sys

import torch

x = torch.empty(1000)
for path in sys.argv[1:3]:
    ctypes.CDLL(path).grow(1000)
print("cuda_lib_string: done")
