"""new_lines.py - C++ news of one native chain made from two Python lines
(tests/integration/agent_new_lines.sh).

Both torch.empty calls run the same C++ path from the same eval loop call
site at the same depth, so the unwind cache answers both with one native
chain and only the Python frames tell them apart: the agent's cache of
merged stack ids (record.c) must give each line its own stack. Prints the
two lines' numbers and the count."""
import sys

import torch

n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
# The process's first storage: from here on the default mode records C++
# news in full (record.h), so both lines' first tensors are alike.
torch.empty(1)
keep_a, keep_b = [], []
for i in range(n):
    keep_a.append(torch.empty(3))  # SITE:a
    keep_b.append(torch.empty(3))  # SITE:b
print(n)
