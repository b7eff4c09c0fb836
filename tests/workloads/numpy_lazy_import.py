# numpy_lazy_import.py - a torch program that uses numpy once
# (numpy_lazy_import.sh). Creating a torch 2.x optimizer imports
# numpy.random and numpy.fft lazily (torch._dynamo.utils touches np.random:
# numpy's module __getattr__ imports it), after numpy's own import and the
# wrap of its handler: those imports' buffers (numpy.random's global
# generator, its seed) are numpy's constants, plain blocks like those of
# numpy's own import. The program's own storages: 10 of torch's, 1 of numpy's.
import numpy as np
import torch

torch.manual_seed(0)
model = torch.nn.Linear(64, 64)
opt = torch.optim.Adam(model.parameters())
model(torch.randn(8, 64)).sum().backward()
opt.step()
np.fft  # numpy 2.x imports numpy.fft here, if nothing did before
draws = np.ones(1000)  # SITE:draws the program's numpy storage: 8000 B
