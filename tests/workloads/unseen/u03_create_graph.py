# u03: backward(create_graph=True) inside a function; the leaf is local and is
# gone when the function returns, but its .grad's graph refers back to it.
import torch
torch.set_num_threads(1)

def hessian_step():
    w = torch.full((512, 512), 0.5, requires_grad=True)  # SITE:leaf
    loss = (w * w * w).sum()  # SITE:loss
    loss.backward(create_graph=True)  # SITE:backward
    return float(loss)

hessian_step()  # SITE:call
print("u03 done")
