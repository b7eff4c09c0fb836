#!/bin/sh
# text_peak_hidden.sh - the text report's peak consumers fold import torch's
# one-time allocations into one "hidden:" line, as the leaks do (issue 29
# item 5): the first site is the program's tensor, not its `import torch`
# line; --no-default-suppressions shows that line first again.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
cat >peak.py <<'PY'
import torch

x = torch.ones(4 << 20)  # 16 MiB: below import torch's ~60 MiB, sampled
y = x[: 1 << 20] + 1  # the peak: 20 MiB of storages
PY
"$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" peak.py >run.out 2>run.err ||
    { cat run.err >&2; fail "run exited $?"; }
set -- "$TMP"/t.*.tlt
"$TL" report "$1" >r.txt || fail "report exited $?"
"$TL" report --no-default-suppressions "$1" >all.txt || fail "report --no-default-suppressions exited $?"
peak() { sed -n '/^Peak consumers/,/^$/p' "$1"; }
peak r.txt | sed -n 2p | grep -q '^  hidden: [0-9.]* MiB in [0-9]* blocks of one-time allocations (.*CPython import machinery' ||
    fail "no hidden line first: $(peak r.txt | head -n3)"
peak r.txt | sed -n 3p | grep -q '^  16.0 MiB in 1 block \[storage\] at peak.py:3$' ||
    fail "first peak consumer: $(peak r.txt | sed -n 3p), want peak.py:3's 16.0 MiB"
peak r.txt | grep -q 'at peak.py:1\b' && fail "import torch's line among the peak consumers: $(peak r.txt | grep 'peak.py:1')"
peak all.txt | sed -n 2p | grep -q '^  [0-9.]* MiB in [0-9]* blocks at peak.py:1 (' ||
    fail "--no-default-suppressions: first peak consumer $(peak all.txt | sed -n 2p), want import torch's line"
echo ok
