#!/bin/sh
# check_holder_words.sh - check's verdict names the object that holds a
# storage as the report does: a numpy array kept by a global is "held by an
# array", a tensor "held by a tensor" (a fresh user read "held by a tensor"
# for an np.ones array). np.ones(500000) is 4000000 B, torch.ones(1000) 4000 B.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
cat >arr.py <<'PY'
import numpy as np
import torch

keep = np.ones(500000)  # SITE:array
t = torch.ones(1000)  # SITE:tensor
print("ok")
PY
A=$(site_line arr.py array)
T=$(site_line arr.py tensor)
"$TL" check --max-leak-storage=0 -- "$PYTHON3" arr.py >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "exit $rc, want 23"; }
grep -qx "  3.81 MiB in 1 block at arr.py:$A; held by an array (3.81 MiB)" out ||
    fail "array's holder: $(cat out)"
grep -qx "  3.91 KiB in 1 block at arr.py:$T; held by a tensor (3.91 KiB)" out ||
    fail "tensor's holder: $(cat out)"
exit 0
