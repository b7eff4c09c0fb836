# u14: a module-level dict keyed by id() of inputs keeps the results.
import torch
torch.set_num_threads(1)

features = {}

def featurize(x):
    features[id(x)] = x.repeat(4, 1)  # SITE:feat
    return 0

inputs = [torch.ones(64, 1024) for _ in range(2)]  # SITE:input
for x in inputs:
    featurize(x)  # SITE:call
print("u14 done")
