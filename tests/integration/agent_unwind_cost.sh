#!/bin/sh
# agent_unwind_cost.sh - libunwind's signal blocking stays out of the kernel
# during the agent's unwinds. libunwind 1.6 blocks every signal around each
# frame lookup (rt_sigprocmask SIG_SETMASK of the full set, then the restore),
# ~52 system calls per allocation at torch's import; the agent's sigprocmask
# hook answers those pairs inside its own unwinds (unwinder.h). Checked with
# strace on a workload whose unwind-cache fills miss libunwind's frame cache
# (12k such blocks before): few full-set blocks, the program's own 10
# sigprocmask calls all reach the kernel, and every stack is recorded.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
command -v strace >/dev/null || { echo "no strace"; exit 77; }
strace -f -qq -e trace=rt_sigprocmask -o "$T/probe.log" true 2>/dev/null ||
    { echo "strace cannot trace here"; exit 77; }
cd "$T" || exit 99
TENSORLEAK_OUTPUT="$T/cost.%p.tlt" strace -f -qq -e trace=rt_sigprocmask -o calls.log \
    env LD_PRELOAD="$AGENT" "$WL/agent_unwind_cost" > out.txt 2>&1
rc=$?
cat out.txt
[ $rc -eq 0 ] || fail "exit $rc"
grep -qx 'allocs 768' out.txt || fail "workload output"
blocks=$(count 'rt_sigprocmask\(SIG_SETMASK, ~\[' calls.log)
own=$(count 'rt_sigprocmask\(SIG_BLOCK, \[USR1\], NULL, 8\) = 0' calls.log)
echo "full-set blocks: $blocks, the program's SIGUSR1 blocks: $own"
[ "$own" -eq 10 ] || fail "the program's sigprocmask calls: $own of 10 reached the kernel"
[ "$blocks" -le 200 ] || fail "$blocks full-set signal blocks (libunwind's, at most 200 expected)"
set -- "$T"/cost.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected one trace, got: $*"
dump_of "$1" > d.txt
# 768 allocations from the ring, each under 60+ frames (64 recorded).
n=$(count '^alloc .* stack=[1-9]' d.txt)
[ "$n" -ge 768 ] || fail "$n allocations with a stack"
deep=$(count '^stack .* nframes=64 ' d.txt)
[ "$deep" -ge 256 ] || fail "$deep stacks of 64 frames (256 expected)"
echo ok
