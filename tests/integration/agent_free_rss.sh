#!/bin/sh
# agent_free_rss.sh - freed memory leaves the process under the agent as it
# does under glibc (issue 28, item 9; the settings: src/agent/hooks.c).
# A block of 32 MiB or more (256 MiB malloc, 64 MiB calloc, 48 MiB
# posix_memalign, a realloc to 40 MiB), touched and freed, leaves Rss
# within 8 MiB of the program's start, in the default and `all` modes and
# with TENSORLEAK_DISABLE=1 (before: +256 MiB until exit). 64 freed blocks
# of 4 MiB are lazily freed (MADV_FREE: the kernel takes them back under
# memory pressure) within jemalloc's 10 s dirty decay while the program
# allocates; glibc unmaps them at once.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
unset TENSORLEAK_MODE
grep -q '^LazyFree:' /proc/self/smaps_rollup 2>/dev/null || { echo "no LazyFree in smaps_rollup"; exit 77; }

# big OUT: every step's Rss within 8 MiB of start's.
big() {
    "$PYTHON" - "$1" <<'PY' || fail "$1: $(cat "$1")"
import sys
rows = {l.split()[0]: int(l.split()[1].split("=")[1]) for l in open(sys.argv[1])}
assert sorted(rows) == ["calloc", "malloc", "memalign", "realloc", "start"], rows
for step in ("malloc", "calloc", "memalign", "realloc"):
    assert rows[step] <= rows["start"] + 8192, (step, rows)
PY
}
PYTHON=${PYTHON3:-/usr/bin/python3}

"$WL/free_rss" big >plain.out || fail "plain run exited $?"
big plain.out
for mode in default all; do
    TENSORLEAK_MODE=$mode TENSORLEAK_OUTPUT="$T/b.%p.tlt" LD_PRELOAD="$AGENT" "$WL/free_rss" big \
        >$mode.out 2>$mode.err || fail "$mode: exited $?: $(cat $mode.err)"
    [ -s $mode.err ] && fail "$mode: stderr: $(cat $mode.err)"
    big $mode.out
done
TENSORLEAK_DISABLE=1 LD_PRELOAD="$AGENT" "$WL/free_rss" big >disabled.out || fail "disabled: exited $?"
big disabled.out

TENSORLEAK_OUTPUT="$T/m.%p.tlt" LD_PRELOAD="$AGENT" "$WL/free_rss" mid >mid.out 2>mid.err ||
    fail "mid: exited $?: $(cat mid.err)"
"$PYTHON" - mid.out <<'PY' || fail "mid: $(cat mid.out)"
import sys
lines = open(sys.argv[1]).read().split("\n")
rows = {l.split()[0]: dict(kv.split("=") for kv in l.split()[1:]) for l in lines if "rss=" in l}
held, later = int(rows["held"]["rss"]), rows["later"]
assert held >= 262144, rows                      # 64 x 4 MiB touched
settled = [float(l.split()[2]) for l in lines if l.startswith("settled after")]
assert settled and settled[0] < 15, lines        # within the decay, not the 15 s bound
assert int(later["rss"]) - int(later["lazy"]) < 80 * 1024, rows
PY
echo ok
