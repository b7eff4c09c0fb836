#!/bin/sh
# compress.sh - compressed traces (docs/trace-format.md "Compressed
# traces"): `run --compress` leaves compressed traces that `report` reads
# as the raw ones (the same JSON but for the path), `check --compress`
# compresses the traces a failed check keeps; `tensorleak compress`
# of a copy of a raw `all`-mode trace makes it smaller and the report of
# it keeps the raw one's flat memory; a compressed trace cut at any of 40
# places reads up to its last whole chunk (exit 5, one warning line, events
# never fewer than at a shorter cut); a cut inside the header, a second
# compress, a file that is no trace: one clear line each. A trace whose
# process still runs, idle or not, is left raw (exit 5; its writer would go
# on writing the file the rename replaced), in `compress` and in `run
# --compress` (a daemon outliving the command); `check --trace --compress`
# is a usage error.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
CLI=${TL_CLI:-$TL_BUILDDIR/tensorleak}
[ -x "$CLI" ] || { echo "missing $CLI"; exit 99; }
PY=${PYTHON3:-/usr/bin/python3}
maxrss() { # peak RSS in KiB of CMD (getrusage of the waited child)
    "$PY" -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
if rc not in (0, 5): sys.exit("exit status %d" % rc)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$@"
}
events() { # events in the JSON report of $1 (exit 0 or 5 allowed)
    "$CLI" report --format=json "$1" 2>"$T/err" >"$T/ev.json"
    rc=$?
    [ "$rc" = 0 ] || [ "$rc" = 5 ] || fail "report of a cut trace exited $rc: $(cat "$T/err")"
    "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["trace"]["events"])' "$T/ev.json"
}
magic() { head -c 8 "$1" | tr -d '\0'; }

# run --compress: the run's traces are compressed before they are read
"$CLI" run --compress -o "$T/run.%p.tlt" --format=json -- "$WL/agent_churn" 20000 \
    >"$T/run.json" 2>"$T/run.err" || fail "run --compress: $(cat "$T/run.err")"
set -- "$T"/run.*.tlt
[ -f "$1" ] || fail "run --compress left no trace"
[ "$(magic "$1")" = TLTRACEZ ] || fail "run --compress left a raw trace"
"$CLI" report --format=json "$1" >"$T/again.json" || fail "report of run's compressed trace"

# check --compress: a failed check's kept traces are compressed
(cd "$T" && "$CLI" check --compress --max-peak=1 -- "$WL/check_leaks" leak >/dev/null 2>"$T/ck.err")
[ $? = 23 ] || fail "check --max-peak=1 did not fail: $(cat "$T/ck.err")"
set -- "$T"/tensorleak-*/*.tlt
[ -f "$1" ] && [ "$(magic "$1")" = TLTRACEZ ] || fail "check --compress kept no compressed trace: $*"

# a raw trace, a compressed copy: the same report, smaller
LD_PRELOAD="$AGENT" TENSORLEAK_OUTPUT="$T/raw.tlt" "$WL/agent_churn" 200000 >/dev/null ||
    fail "churn"
cp "$T/raw.tlt" "$T/z.tlt"
chmod 0640 "$T/z.tlt"
"$CLI" compress "$T/z.tlt" 2>"$T/c.err" || fail "compress: $(cat "$T/c.err")"
[ "$(stat -c %a "$T/z.tlt")" = 640 ] || fail "compress changed the mode to $(stat -c %a "$T/z.tlt")"
grep -q "z.tlt: .* [kM]B -> .* [kM]B" "$T/c.err" || fail "compress said: $(cat "$T/c.err")"
[ "$(magic "$T/z.tlt")" = TLTRACEZ ] || fail "not compressed"
ls -a "$T" | grep -q '\.z' && fail "compress left its temporary file"
rs=$(stat -c %s "$T/raw.tlt")
zs=$(stat -c %s "$T/z.tlt")
[ "$zs" -lt "$rs" ] || fail "compressed $zs bytes, raw $rs"
"$CLI" report --format=json "$T/raw.tlt" | grep -v '"path"' >"$T/raw.json"
"$CLI" report --format=json "$T/z.tlt" | grep -v '"path"' >"$T/z.json"
cmp -s "$T/raw.json" "$T/z.json" || fail "reports differ: $(diff "$T/raw.json" "$T/z.json" | head)"
"$CLI" check --trace="$T/z.tlt" --max-leak=1G >/dev/null || fail "check --trace of it"
r1=$(maxrss "$CLI" report --format=json "$T/raw.tlt") || fail "rss raw"
r2=$(maxrss "$CLI" report --format=json "$T/z.tlt") || fail "rss z"
echo "raw $rs bytes, compressed $zs; report peak RSS $r1 KiB raw, $r2 KiB compressed"
[ "$r2" -le $((r1 + 4096)) ] || fail "report of the compressed trace: $r2 KiB, raw $r1"

# cut anywhere: up to the last whole chunk, never fewer events than before
full=$(events "$T/z.tlt")
last=0
i=0
while [ $i -le 40 ]; do
    cut=$((4096 + (zs - 4096) * i / 40 + i % 3))
    [ $cut -le "$zs" ] || cut=$zs
    head -c $cut "$T/z.tlt" >"$T/cut.tlt"
    n=$(events "$T/cut.tlt")
    [ "$n" -ge "$last" ] || fail "cut at $cut: $n events, fewer than $last at a shorter cut"
    if [ $cut -lt "$zs" ]; then
        grep -q "trace truncated" "$T/err" || fail "cut at $cut: no truncation warning: $(cat "$T/err")"
    fi
    last=$n
    i=$((i + 1))
done
[ "$last" = "$full" ] || fail "the whole file: $last events, not $full"
head -c 1000 "$T/z.tlt" >"$T/hdr.tlt"
"$CLI" report "$T/hdr.tlt" >/dev/null 2>"$T/err"
rc=$?
[ "$rc" -lt 128 ] || fail "a cut header crashed the report ($rc)"

# a second compress, and a file that is not a trace
"$CLI" compress "$T/z.tlt" 2>"$T/err" || fail "compress of a compressed trace"
grep -q "compressed already" "$T/err" || fail "said: $(cat "$T/err")"
ln -s z.tlt "$T/link.tlt"
"$CLI" compress "$T/link.tlt" 2>"$T/err"
[ $? = 3 ] && grep -q "symbolic link" "$T/err" || fail "compress of a link: $(cat "$T/err")"
# a trace being written by an idle process; a daemon outliving run's command
"$PY" -c 'import time; x = [bytearray(70000) for _ in range(20)]; time.sleep(3)' &
sleeper=$!
TENSORLEAK_OUTPUT="$T/idle.%p.tlt" LD_PRELOAD="$AGENT" "$PY" -c '
import os, sys, time
x = [bytearray(70000) for _ in range(20)]
open(sys.argv[1], "w").write("ready")
time.sleep(4)' "$T/ready" &
idle=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s "$T/ready" ] && break; sleep 0.5; done
set -- "$T"/idle.*.tlt
"$CLI" compress "$1" 2>"$T/err"
rc=$?
wait "$idle" "$sleeper"
[ $rc = 5 ] && grep -q "still being written; left uncompressed" "$T/err" ||
    fail "compress of a trace being written: exit $rc: $(cat "$T/err")"
[ "$(magic "$1")" = TLTRACE ] || fail "the trace being written was replaced"
"$CLI" report "$1" 2>"$T/err" | grep -q "live at end in" || fail "its report: $(cat "$T/err")"
"$CLI" run --compress --output="$T/d.%p.tlt" -- "$PY" -c '
import os, time
if os.fork() == 0:
    os.setsid()
    time.sleep(1)
    keep = [bytearray(200000) for _ in range(50)]
    os._exit(0)' >/dev/null 2>"$T/err" || fail "run --compress of a daemon: $(cat "$T/err")"
grep -q "still being written; left uncompressed" "$T/err" || fail "run said: $(cat "$T/err")"
sleep 3
n=0
for f in "$T"/d.*.tlt; do
    [ "$(magic "$f")" = TLTRACE ] || continue
    n=$((n + 1))
    "$CLI" report --format=json "$f" >"$T/d.json" || fail "report of the daemon's trace"
    "$PY" -c 'import json, sys; r = json.load(open(sys.argv[1]))
sys.exit(0 if r["summary"]["leaked_blocks"] >= 50 else "daemon: %s" % r["summary"])' "$T/d.json" ||
        fail "the daemon's trace lost its blocks"
done
[ $n = 1 ] || fail "$n raw traces after run --compress of a daemon, want 1"
"$CLI" check --trace="$T/z.tlt" --compress 2>"$T/err"
[ $? = 2 ] && grep -q "^tensorleak: --compress: --trace checks" "$T/err" ||
    fail "check --trace --compress: $(cat "$T/err")"
echo hello >"$T/no.tlt"
"$CLI" compress "$T/no.tlt" 2>"$T/err"
[ $? = 4 ] || fail "compress of a non-trace: not exit 4"
[ "$(wc -l <"$T/err")" = 1 ] && grep -q "not a tensorleak trace" "$T/err" || fail "$(cat "$T/err")"
exit 0
