#!/bin/sh
# fresh_check_shim.sh - check through a bash shim that execs the program
# (a pyenv or venv launcher) removes the trace of the shim's own image, as
# run does: under check every block is recorded (TENSORLEAK_MODE=all), and
# the shell's reallocs, flagged "its old pointer's free came first", were
# taken for storages, so each helper's trace stayed in the current
# directory. Also run with TENSORLEAK_MODE=all.
. "$TL_SRCDIR/tests/integration/lib.sh"
[ -x /bin/bash ] || skip "no /bin/bash"
make_tmp
printf '#!/bin/bash\nexec "$@"\n' >shim.sh
chmod +x shim.sh
mkdir c && cd c || hard_error "cd c"
"$TL" check --max-leak=1G --output=/dev/null --trace-output=tensorleak.%p.tlt -- ../shim.sh /bin/true >out 2>err
rc=$?
[ "$rc" -eq 0 ] || { cat err >&2; fail "check exited $rc"; }
set -- tensorleak.*.tlt
[ $# -eq 1 ] || fail "check left $# traces, want 1 (the program's): $*"
case $1 in tensorleak.*.1.tlt) ;; *) fail "the trace left is $1, not the exec'd image's" ;; esac
cd .. && mkdir r && cd r || hard_error "cd r"
TENSORLEAK_MODE=all "$TL" run --report=/dev/null -- ../shim.sh /bin/true >out 2>err
rc=$?
[ "$rc" -eq 0 ] || { cat err >&2; fail "run exited $rc"; }
grep -qx 'tensorleak: 1 other process or image traced: helpers with nothing of interest, traces removed' err ||
    { cat err >&2; fail "run: the shim's trace was not removed"; }
set -- tensorleak-*/tensorleak.*.tlt
[ $# -eq 1 ] || fail "run left $# traces, want 1: $*"
echo ok
