# agent_pyfork.py - Python frames and report points across fork, for
# tests/integration/agent_pyframes.sh: the parent records a report point and
# forks; the child allocates at a known line and records its own report
# point, then leaves with os._exit. Each trace must stand alone.
import os

import tensorleak


def child_alloc():
    return bytearray(500001)  # SITE:child


tensorleak.snapshot("before_fork")
pid = os.fork()
if pid == 0:
    keep = child_alloc()  # SITE:call_child
    tensorleak.snapshot("in_child")
    os._exit(0)
_, status = os.waitpid(pid, 0)
print("child", pid, status)
