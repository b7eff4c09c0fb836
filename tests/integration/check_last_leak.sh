#!/bin/sh
# check_last_leak.sh - a block lost with a process's last allocation is
# definitely lost. The agent's per-thread trace cursor (static TLS, which
# the leak scan reads as a root) kept the last pointer it wrote raw, so
# that block was "still reachable" and check --max-leak=0 passed (exit 0):
# a C test binary losing 100 B as its last malloc, under a wrapper script
# too, and a DataLoader worker losing 555 B through ctypes (3 runs of 3).
# It now keeps the pointer complemented (src/agent/wcursor.h).
# A process ended by SIGTERM while waiting in pause() had its last lost
# block "still reachable" (the scan read its stack from the handler's
# frame: the red zone below the interrupted sp held the returned
# function's local), then "possibly lost" (memset's last destination, an
# interior pointer, in a caller-saved register): now definitely lost, its
# stack read from the interrupted sp and, in a system call, only the
# callee-saved registers read (src/agent/endsig.c).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
LAST="$TL_BUILDDIR/tests/workloads/last_leak"
line=$(grep -n 'lost here' "$SRC_WL/last_leak.c" | cut -d: -f1)

# lost_100 NAME [MODE]: check of last_leak MODE exits 23 with its 100 B
# definitely lost at the lost line (out: the verdict)
lost_100() {
    "$TL" check --max-leak=0 -- "$LAST" ${2:+"$2"} >out 2>err
    rc=$?
    [ $rc -eq 23 ] || { cat out err >&2; fail "$1: exit $rc, want 23"; }
    grep -q "^  100 B in 1 block in lose (last_leak.c:$line); definitely lost 100 B$" out ||
        { cat out >&2; fail "$1: not 100 B definitely lost at line $line"; }
}
lost_100 last_leak

# a child's, ended by its parent's SIGTERM in pause() (3 runs of 3 before)
lost_100 term term
grep -Eq '^process [0-9]+ \(child of [0-9]+\) last_leak term: FAILED: 1 of 1 limit exceeded$' out ||
    { cat out >&2; fail "term: the child's line"; }

# ... and so is one whose own SIGTERM handler calls exit(): the kernel's
# signal frame above the exit path kept the waiting call's dead registers
# and red zone (5 of 5 still reachable before: a helper's break test)
lost_100 term_exit term_exit

# ... but a program's own inline system call keeps every register a root:
# two live blocks held in r8 and r10 alone, SIGTERM'd, are not lost (the
# first fix read callee-saved registers alone there: 7.81 KiB lost, exit 23)
REG="$TL_BUILDDIR/tests/workloads/reg_live"
if [ "$(uname -m)" = x86_64 ]; then
    printf '#!/bin/bash\n"%s" >ready.txt &\np=$!\ni=0\nwhile ! grep -q ready ready.txt && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done\nsleep 0.2\nkill -TERM $p\nwait $p\ntrue\n' "$REG" >reg.sh
    chmod +x reg.sh
    "$TL" check --max-leak=0 -- ./reg.sh >out 2>err
    rc=$?
    [ $rc -eq 0 ] || { cat out err >&2; fail "reg_live: exit $rc, want 0"; }
    grep -Eq '^  ok   max-leak: 0 B definitely lost or indirectly lost at the end point \(not counted: 7.81 KiB still reachable\), limit 0 B$' out ||
        { cat out >&2; fail "reg_live: not 7.81 KiB still reachable"; }
fi

# under a wrapper (a launcher: the program is checked)
printf '#!/bin/sh\nset -e\n"%s"\necho tests done\n' "$LAST" >wrap.sh && chmod +x wrap.sh
"$TL" check --max-leak=0 -- ./wrap.sh >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "wrapper: exit $rc, want 23"; }
grep -q "definitely lost 100 B$" out || { cat out >&2; fail "wrapper: not 100 B definitely lost"; }

# a DataLoader worker's last allocation, through ctypes
"$PYTHON3" -c 'import torch' 2>/dev/null || { echo "no torch: DataLoader part skipped"; exit 0; }
cat >dl.py <<'PY'
import ctypes, torch
from torch.utils.data import DataLoader, Dataset
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
class D(Dataset):
    def __len__(self): return 4
    def __getitem__(self, i):
        if i == 1:
            libc.malloc(555)
        return torch.zeros(3)
if __name__ == "__main__":
    for b in DataLoader(D(), batch_size=2, num_workers=2):
        pass
PY
"$TL" check --max-leak=0 -- "$PYTHON3" dl.py >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "DataLoader: exit $rc, want 23"; }
grep -Eq '^process [0-9]+ \(DataLoader worker 0, child of [0-9]+\) .*: FAILED: 1 of 1 limit exceeded$' out ||
    { cat out >&2; fail "DataLoader: worker 0 not named"; }
grep -q "^  555 B in 1 block at dl.py:9; definitely lost 555 B$" out ||
    { cat out >&2; fail "DataLoader: not 555 B definitely lost at dl.py:9"; }
exit 0
