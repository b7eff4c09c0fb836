# report_seed_table.py - the seed's table: which expressions share a tensor's
# storage and which make a new one (tests/integration/report_seed_table.sh).
# Every result is kept in a module global, so all are alive at script_end.
import torch

torch.manual_seed(0)
torch.set_num_threads(1)

a = torch.randn(256, 1024)  # SITE:a
b = a  # SITE:alias
v = a.view(1024, 256)  # SITE:view
s = a[:2]  # SITE:slice
c = a.clone()  # SITE:clone
d = a.detach()  # SITE:detach
dc = a.detach().clone()  # SITE:detach_clone
print("seed_table:", tuple(v.shape), tuple(s.shape), c.data_ptr() != a.data_ptr())
