# u01: a custom autograd Function keeps its output in a list on ctx, inside a
# model's forward: ctx -> list -> output -> grad_fn -> ctx (uncollected cycle).
import gc
import torch
gc.disable()
torch.set_num_threads(1)

class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x * 3  # SITE:out
        ctx.keep = [y]  # SITE:bug
        return y

    @staticmethod
    def backward(ctx, g):
        return g * 3

class Model(torch.nn.Module):
    def forward(self, x):
        return Scale.apply(x)

m = Model()
x = torch.ones(512, 512, requires_grad=True)  # SITE:input
for _ in range(2):
    m(x)  # SITE:call
print("u01 done")
