# u21: a model and its optimizer (SGD with momentum) trained a few steps: each
# parameter is the model's, named through the model, though the optimizer
# refers to it too (param_groups, its state's keys); the momentum buffers are
# kept by the optimizer alone.
import torch
torch.set_num_threads(1)
torch.manual_seed(0)

model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10))  # SITE:model
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for _ in range(3):
    x = torch.randn(64, 256)
    loss = model(x).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # SITE:backward
    opt.step()  # SITE:step
del x, loss
print("u21 done")
