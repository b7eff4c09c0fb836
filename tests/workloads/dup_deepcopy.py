# dup_deepcopy.py - copies made by deep copy and by copy_ into an existing
# storage (dup_deepcopy.sh): optimizer.load_state_dict (torch 1.13 deep
# copies its state; 2.x keeps the same tensors), copy.deepcopy of a model
# (Parameter.__deepcopy__), Module.load_state_dict of a torch.load'ed state
# (param.copy_(input_param); torch 2.x's loaded storages say resizable()
# False), a torch.load'ed state copied into existing tensors and storages.
# copy.copy of a tensor shares its storage: no copy.
import copy
import io
import torch

torch.manual_seed(0)
model = torch.nn.Linear(1024, 1024)  # a 4 MiB weight
opt = torch.optim.Adam(model.parameters())
model(torch.randn(4, 1024)).sum().backward()
opt.step()
opt2 = torch.optim.Adam(model.parameters())
opt2.load_state_dict(opt.state_dict())
twin = copy.deepcopy(model)
kept = torch.ones(1 << 20)
same = copy.copy(kept)  # the same storage
buf = io.BytesIO()
torch.save(model.state_dict(), buf)
buf.seek(0)
loaded = torch.load(buf)
model2 = torch.nn.Linear(1024, 1024)
model2.load_state_dict(loaded)
# A torch.load'ed state copied into tensors the program already had: by
# Tensor.copy_, and storage to storage (UntypedStorage.copy_; 1.13's
# TypedStorage.copy_ calls it).
buf.seek(0)
state = torch.load(buf, map_location="cpu")
into = torch.empty(1024, 1024)
into.copy_(state["weight"])
raw = torch.empty(1024, 1024)
storage = raw.untyped_storage() if hasattr(raw, "untyped_storage") else raw.storage().untyped()
storage.copy_(state["weight"].untyped_storage() if hasattr(raw, "untyped_storage") else
              state["weight"].storage().untyped())
