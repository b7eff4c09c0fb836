# u20: a custom autograd Function saves its output with ctx.save_for_backward;
# the loss of each step is kept, so its graph keeps what forward saved.
import torch
torch.set_num_threads(1)
torch.manual_seed(0)


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()  # SITE:saved
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        y, = ctx.saved_tensors
        return g * y


outs = []
for _ in range(2):
    x = torch.randn(512, 512, requires_grad=True)  # SITE:input
    outs.append(Exp.apply(x).sum())  # SITE:loss
print("u20 done")
