#!/bin/sh
# run_fork.sh - a program that forks: parent and child each get their own
# trace; `run` reports the parent and names the child's trace.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp

# Exact small-block leaks: `all` mode (the default samples them).
TENSORLEAK_MODE=all "$TL" run --output="$TMP/t.%p.tlt" -- "$WL/fork_leaks" >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
set -- "$TMP"/t.*.tlt
[ $# -eq 2 ] || fail "expected 2 traces, got $#: $*"
# One line says how many other processes were traced and where (the child
# is a fork of the main program: its trace is kept).
[ "$(grep -c 'other process' run.err)" -eq 1 ] &&
    grep -qx "tensorleak: 1 other process or image traced: their traces are in $TMP" run.err ||
    { cat run.err >&2; fail "run did not say where the child's trace is"; }
parent=""; child=""
for t in "$@"; do
    "$TL" report --format=json --top=0 "$t" >r.json || fail "report $t exited $?"
    "$PYTHON3" -c 'import json,sys; r=json.load(open("r.json")); print(r["process"]["pid"], r["process"]["ppid"])' >ids || hard_error "json"
    read -r pid ppid <ids
    case "$t" in *".$pid.tlt") ;; *) fail "trace $t has pid $pid" ;; esac
    if grep -q '"child_leak"' r.json; then cp r.json child.json; child=$pid; else cp r.json parent.json; parent=$pid; fi
done
[ -n "$parent" ] && [ -n "$child" ] || fail "could not tell parent ($parent) from child ($child)"

cat >parent.py <<'PY'
# called from two lines of main: two sites (stacks) of one block each
found = sites_at("leaks", "parent_leak", line("parent_leak"), innermost_only=True)
check(len(found) == 2 and all(s["blocks"] == 1 and s["bytes"] == 1500 for s in found),
      f"parent leak sites {found}")
check(not sites_at("leaks", "child_leak"), "child's leak in the parent's trace")
check(report["process"]["exit_status"] == 0, "parent exit status")
PY
cat >child.py <<'PY'
found = sites_at("leaks", "child_leak", line("child_leak"), innermost_only=True)
check(len(found) == 1 and found[0]["blocks"] == 1 and found[0]["bytes"] == 2500,
      f"child leak sites {found}")
check(not sites_at("leaks", "parent_leak"), "parent's blocks in the child's trace")
check(report["process"]["exit_status"] == 7, f"child exit status {report['process']['exit_status']}")
PY
"$PYTHON3" "$TLCHECK" parent.json "$SRC_WL/fork_leaks.c" parent.py || exit 1
"$PYTHON3" "$TLCHECK" child.json "$SRC_WL/fork_leaks.c" child.py || exit 1
"$PYTHON3" -c "import json; r=json.load(open('child.json')); assert r['process']['ppid'] == $parent, r['process']" ||
    fail "child's ppid is not the parent's pid"
