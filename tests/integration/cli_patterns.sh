#!/bin/sh
# cli_patterns.sh - trace path patterns and small CLI defects a fresh user
# met (issue 11): a '%' at the end, an unknown %q and a %p in the
# directory part of --trace-output / run --output are usage errors (2)
# said before the command runs; "%%" in the directory and a '%' in the
# working directory's name are taken as the agent takes them; the bare
# usage names every report format; run's summary names the main trace
# before the other processes.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
bad() { # bad WHY ARGS...: exit 2, one line "tensorleak: WHY", the command not run
    _why=$1
    shift
    "$TL" "$@" -- sh -c 'touch ran' >out 2>err
    _rc=$?
    [ $_rc -eq 2 ] || fail "$*: exit $_rc, want 2"
    [ "$(cat err)" = "tensorleak: $_why" ] || fail "$*: said '$(cat err)'"
    [ ! -e ran ] || fail "$*: the command ran"
}
H="(%p is the pid, %h the host name, %% a '%')"
bad "--trace-output: 'x%': a '%' at the end $H" check --trace-output='x%'
bad "--trace-output: 'x.%q.tlt': unknown %q $H" check --trace-output='x.%q.tlt'
bad "--trace-output: 'd%p/t.tlt': %p in the directory (every process writes into one directory that exists before the command runs: put %p in the file name)" \
    check --trace-output='d%p/t.tlt'
bad "run: --output: 'x%': a '%' at the end $H" run --output='x%'
bad "run: --output: 'd%h/t.tlt': %h in the directory (every process writes into one directory that exists before the command runs: put %h in the file name)" \
    run --output='d%h/t.tlt'

# %h: the host name, in the file name
"$TL" run --output="t.%h.%p.tlt" -- "$WL/leak_kinds" >out 2>err || fail "%h: exit $?: $(cat err)"
set -- "t.$(uname -n).$(sed -n 's/^tensorleak: trace of .* (pid \([0-9]*\)) written to .*/\1/p' err).tlt"
[ -f "$1" ] || fail "%h: no trace $1 in $(ls)"
bad "run: --output: 'r.%d.tlt': unknown %d $H" run --output='r.%d.tlt'

# "%%" in the directory is one '%', as the agent expands it
mkdir 'a%b' || hard_error mkdir
"$TL" run --output='a%%b/t.%p.tlt' -- "$WL/leak_kinds" >out 2>err || fail "a%%b: exit $?: $(cat err)"
set -- a%b/t.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "a%%b: traces $*"
# a '%' in the working directory's name is not a pattern
mkdir 'w%p' || hard_error mkdir
(cd 'w%p' && "$TL" run --output='t.%p.tlt' -- "$WL/leak_kinds" >out 2>err) ||
    fail "in w%p: exit $?: $(cat 'w%p/err')"
set -- w%p/t.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "in w%p: traces $*"

# the bare usage lists every format
"$TL" >out 2>err
[ $? -eq 2 ] || fail "bare tensorleak: want 2"
grep -q "folded-end" err && grep -q "html" err || fail "bare usage: $(cat err)"

# run: the main trace's line, then the other processes'
"$TL" run -- sh -c '/bin/echo a; /bin/echo b' >out 2>err || fail "run sh: exit $?"
sed -n 1p err | grep -q '^tensorleak: trace of [^ ]* (pid [0-9]*) written to ' &&
    [ "$(sed -n 2p err)" = "tensorleak: 2 other processes and images traced: helpers with nothing of interest, traces removed" ] ||
    fail "run summary order: $(cat err)"
exit 0
