# u11: Adam keeps moments of a layer that was replaced in the model.
import torch
torch.set_num_threads(1)

model = torch.nn.Sequential(torch.nn.Linear(256, 512))  # SITE:layer
opt = torch.optim.Adam(model.parameters())
model(torch.ones(2, 256)).sum().backward()
opt.step()  # SITE:step
model[0] = torch.nn.Linear(256, 4)  # SITE:replace
opt.zero_grad(set_to_none=True)
print("u11 done")
