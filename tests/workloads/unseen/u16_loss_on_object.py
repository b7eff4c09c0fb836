# u16: a trainer object keeps each step's loss tensor with its graph.
import torch
torch.set_num_threads(1)
torch.manual_seed(0)

class Trainer:
    def __init__(self):
        self.net = torch.nn.Linear(64, 2048)  # SITE:net
        self.history = []

    def step(self, x):
        h = torch.tanh(self.net(x))  # SITE:act
        loss = h.mean()  # SITE:loss
        self.history.append(loss)  # SITE:keep

tr = Trainer()
x = torch.ones(256, 64)  # SITE:x
for _ in range(2):
    tr.step(x)  # SITE:call
print("u16 done")
