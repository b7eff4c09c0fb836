#!/bin/sh
# check_traces.sh - `check -- CMD` leaves no trace behind after a pass
# (issue 11: a torch run's all-mode trace is ~300 MB): without
# --trace-output the traces go to a directory tensorleak-<pid>/ of their
# own, removed when every limit is kept; when a limit fails it stays and one
# line names the main trace; --trace-output keeps them where it says.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
K="$WL/leak_kinds"
mkdir pass fail keep || hard_error mkdir
(cd pass && "$TL" check --max-leak=1G -- "$K" >../pass.out 2>../pass.err)
rc=$?
[ $rc -eq 0 ] || { cat pass.out pass.err >&2; fail "pass: exit $rc"; }
[ -z "$(ls -A pass)" ] || fail "a passing check left: $(ls -A pass)"
grep -q 'written to' pass.err && fail "pass: names a trace it removed: $(cat pass.err)"
grep -q "^  scope: end point process_exit of $TMP/pass/tensorleak-[0-9]*/tensorleak\.[0-9]*\.tlt (removed: the check passed; --trace-output=PATTERN keeps the traces)\$" pass.out ||
    fail "pass: scope does not say the trace was removed: $(cat pass.out)"
(cd pass && "$TL" check --format=json --max-leak=1G -- "$K" >../pass.json 2>../pass.err) || fail "pass json: exit $?"
grep -q '^  "trace_kept": false,$' pass.json || fail "pass json: no trace_kept false: $(head -5 pass.json)"

(cd fail && "$TL" check --max-leak=0 -- "$K" >../fail.out 2>../fail.err)
rc=$?
[ $rc -eq 23 ] || { cat fail.out fail.err >&2; fail "fail: exit $rc, want 23"; }
set -- fail/*
[ $# -eq 1 ] && [ -d "$1" ] || fail "fail: left $*, want one directory"
case $1 in fail/tensorleak-[0-9]*) ;; *) fail "fail: directory $1" ;; esac
d=$1
set -- "$d"/*
[ $# -eq 1 ] || fail "fail: $d holds $*"
pid=${1##*/tensorleak.}
pid=${pid%.tlt}
[ "$(cat fail.err)" = "tensorleak: trace of $K (pid $pid) written to $TMP/$1 (kept: a limit was exceeded)" ] ||
    fail "fail: said '$(cat fail.err)'"
grep -q "^  scope: end point process_exit of $TMP/$1\$" fail.out || fail "fail: scope: $(cat fail.out)"
(cd fail && "$TL" check --format=json --max-leak=0 -- "$K" >../fail.json 2>/dev/null)
grep -q '^  "trace_kept": true,$' fail.json || fail "fail json: no trace_kept true: $(head -5 fail.json)"

# a run of two processes: the child passes, the main one fails; the
# child's verdict, written before the run's, says its trace goes with the
# run (kept here), never that it was removed
F="$WL/agent_forker" # the parent's peak 4.98 KiB, the child's 1.95 KiB
mkdir run2 || hard_error mkdir
(cd run2 && "$TL" check --max-peak=3000 -- "$F" >../run2.out 2>../run2.err)
rc=$?
[ $rc -eq 23 ] || { cat run2.out run2.err >&2; fail "run2: exit $rc, want 23"; }
grep -q "removed: the check passed" run2.out && fail "run2: a kept trace said removed: $(cat run2.out)"
grep -Eq "^  scope: end point process_exit of $TMP/run2/tensorleak-[0-9]*/tensorleak\.[0-9]*\.tlt \(removed if the whole run passes; --trace-output=PATTERN keeps the traces\)\$" run2.out ||
    fail "run2: the passing child's scope: $(cat run2.out)"
[ "$(ls run2/tensorleak-*/ | wc -l)" -eq 2 ] || fail "run2: traces kept: $(ls -R run2)"
(cd run2 && "$TL" check --format=json --output=../run2.json --max-peak=3000 -- "$F" >/dev/null 2>&1)
"$PYTHON3" -c 'import json, sys; v = json.load(open("run2.json"))
o = [p for p in v["processes"] if p["process"]["role"] == "child"]
sys.exit(not (v["trace_kept"] is True and len(o) == 1 and o[0]["trace_kept"] is None))' ||
    fail "run2 json: main trace_kept true, the child's null: $(grep trace_kept run2.json)"

# a region the run never closed: known only after the run; the trace stays
mkdir noreg || hard_error mkdir
(cd noreg && "$TL" check --region=nosuch -- "$K" >../noreg.out 2>../noreg.err)
rc=$?
[ $rc -eq 2 ] || { cat noreg.out noreg.err >&2; fail "noreg: exit $rc, want 2"; }
set -- noreg/tensorleak-[0-9]*/tensorleak.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "noreg: left $(ls -R noreg)"
grep -qx "tensorleak: trace of $K (pid [0-9]*) written to $TMP/$1 (kept: it could not be checked)" noreg.err ||
    fail "noreg: said $(cat noreg.err)"

(cd keep && "$TL" check --max-leak=1G --trace-output=t.%p.tlt -- "$K" >../keep.out 2>../keep.err) ||
    fail "keep: exit $?"
set -- keep/*
[ $# -eq 1 ] || fail "keep: left $*"
case $1 in keep/t.[0-9]*.tlt) ;; *) fail "keep: $1" ;; esac
grep -q "^tensorleak: trace of $K (pid [0-9]*) written to $TMP/$1\$" keep.err || fail "keep: said $(cat keep.err)"
exit 0
