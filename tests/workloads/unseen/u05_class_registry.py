# u05: every instance appends its features to a list on the class; the
# instances are gone, the class attribute keeps the tensors.
import torch
torch.set_num_threads(1)

class Sample:
    registry = []

    def __init__(self, i):
        feats = torch.randn(256, 256)  # SITE:feats
        Sample.registry.append(feats)

for i in range(3):
    Sample(i)  # SITE:call
print("u05 done")
