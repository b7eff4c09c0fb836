# ddp_rank_leak.py - a DDP training loop for torchrun (gloo, CPU): 5 steps;
# every rank makes a new 4 MiB tensor each step, and rank 1 alone keeps a
# 16-byte view of each in a module-level list: 4 storages of 4 MiB are
# pinned by views there (the 5th is still the variable big's, as on rank 0:
# rank 1 keeps 5 of the 5 it made, rank 0 1 of 5).
# tests/integration/report_run.sh (issue 24: ranks side by side).
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
ddp = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(64, 64))
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
kept = []
for step in range(5):
    loss = ddp(torch.randn(256, 64)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
    big = torch.randn(1024, 1024)  # SITE:big
    if rank == 1:
        kept.append(big[0, :4])  # SITE:view
dist.destroy_process_group()
print("rank", rank, "done")
