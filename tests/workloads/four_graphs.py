# four_graphs.py - four equal storages from one line, each held only by the
# autograd graph of a kept loss: the text report groups them into one
# paragraph (tests/integration/text_report.sh).
import torch

torch.manual_seed(0)
torch.set_num_threads(1)


def step(x):
    return (x * 2).relu()  # SITE:relu (512 x 1024 float32: 2 MiB, saved for backward)


x = torch.randn(512, 1024, requires_grad=True)  # SITE:input
kept = []
for _ in range(4):
    kept.append(step(x).sum())  # SITE:keep
print("four_graphs: kept", len(kept))
