#!/bin/sh
# run_privdrop.sh - a child that drops its privileges cannot create its
# trace in the run's directory: under `tensorleak run` and `check` the
# agent's line about it goes to the CLI, which says it once in the run's
# summary, not on the program's stderr 4 times (issue 28 item 10, from
# CPython's test_subprocess test_user). Preloaded by hand, with no CLI to
# tell, the agent still prints it on stderr. Needs root and user nobody.
. "$TL_SRCDIR/tests/integration/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "not root"
id nobody >/dev/null 2>&1 || skip "no user nobody"
make_tmp
cat >drop.py <<'PY'
import subprocess
for i in range(4):
    subprocess.run(["/bin/sh", "-c", "echo child"], user="nobody", check=True)
print("done")
PY
"$PYTHON3" -c 'import subprocess, sys; sys.exit(sys.version_info < (3, 9))' || skip "no subprocess user="
want_out=$(printf 'child\nchild\nchild\nchild\ndone')
line='^tensorleak: pids [0-9]+, [0-9]+, [0-9]+, [0-9]+: cannot create trace [^ ]*/tensorleak\.[0-9]+\.tlt: Permission denied \(and 3 more like it\)$'

"$TL" run -- "$PYTHON3" drop.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat err >&2; fail "run: exit $rc"; }
[ "$(head -n5 out)" = "$want_out" ] || fail "run: program output: $(head -n5 out)"
[ "$(grep -c 'cannot create trace' err)" -eq 1 ] || { cat err >&2; fail "run: want one line about the traces"; }
grep -Eq "$line" err || fail "run: $(grep 'cannot create trace' err)"

"$TL" check --max-leak=0 -- "$PYTHON3" drop.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "check: exit $rc"; }
[ "$(head -n5 out)" = "$want_out" ] || fail "check: program output: $(head -n5 out)"
[ "$(grep -c 'cannot create trace' err)" -eq 1 ] || { cat err >&2; fail "check: want one line about the traces"; }
grep -Eq "$line" err || fail "check: $(grep 'cannot create trace' err)"

# by hand: the agent's own line, once per process, on stderr
mkdir traces && chmod 700 traces
TENSORLEAK_OUTPUT="$TMP/traces/t.%p.tlt" LD_PRELOAD="$TL_BUILDDIR/.libs/libtensorleak.so" "$PYTHON3" drop.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat err >&2; fail "preloaded: exit $rc"; }
[ "$(grep -Ec '^tensorleak: cannot create trace [^ ]*/traces/t\.[0-9]+\.tlt: Permission denied$' err)" -eq 4 ] ||
    fail "preloaded: $(cat err)"
exit 0
