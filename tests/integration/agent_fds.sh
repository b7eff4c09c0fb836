#!/bin/sh
# agent_fds.sh - the agent owns no descriptor the program can see, lose or
# reuse (issue 9): a program that closes every descriptor above 2, opens
# its own files, allocates between writes and reads, dup2s over the numbers
# and lists /proc/self/fd gets exactly its files, their bytes and sizes,
# and passes nothing of ours through exec; the trace still has every
# allocation. A Python child started with pass_fds sees 0-2 and those only.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
mkdir "$T/own" || exit 99
TENSORLEAK_OUTPUT="$T/f.%p.tlt" LD_PRELOAD="$AGENT" "$WL/agent_fds" "$T/own" >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] || fail "agent_fds exited $rc: $(cat "$T/out" "$T/err")"
[ -s "$T/err" ] && fail "stderr: $(cat "$T/err")"
# files[3] (descriptor 6) is the one the program left inheritable.
[ "$(cat "$T/out")" = "inherited: 0 1 2 6
fds: ok" ] || fail "program output: $(cat "$T/out")"
# The parent's trace: argv1 is DIR and it ends with exit (the fork child's
# image ends with exec, reason=1).
main=
for f in "$T"/f.*.tlt; do
    dump_of "$f" >"$f.d"
    grep -q "^process .* argv1=$T/own\( \|\$\)" "$f.d" &&
        grep -q '^end .* reason=0 ' "$f.d" && main=$f
done
[ -n "$main" ] || fail "no trace of the parent image"
# churn's allocations: 1000 + 8 files x (16 x 2000 + 16 x 500) + 20000.
n=$(count '^alloc .* site=agent_fds\+' "$main.d")
[ "$n" -eq 341000 ] || fail "want 341000 allocations from agent_fds, got $n"
grep -qE '^end .* dropped=0' "$main.d" || fail "records dropped: $(grep '^end' "$main.d")"

# pass_fds: the child lists what it has open (fstat, which opens nothing).
"${PYTHON3:-/usr/bin/python3}" - "$AGENT" "$T" <<'PY' || exit 1
import os, subprocess, sys
agent, tmp = sys.argv[1], sys.argv[2]
child = ("import os\n"
         "fds = []\n"
         "for fd in range(1024):\n"
         "    try:\n"
         "        os.fstat(fd)\n"
         "        fds.append(fd)\n"
         "    except OSError:\n"
         "        pass\n"
         "print(' '.join(map(str, fds)))\n")
parent = ("import os, subprocess, sys\n"
          "r, w = os.pipe()\n"
          "n = os.open('/dev/null', os.O_RDONLY)\n"
          "out = subprocess.run([sys.executable, '-c', sys.argv[1]], pass_fds=(w, n),\n"
          "                     capture_output=True, text=True, check=True).stdout\n"
          "print(w, n, '|', out.strip())\n")
env = dict(os.environ, LD_PRELOAD=agent, TENSORLEAK_OUTPUT=tmp + "/p.%p.tlt")
out = subprocess.run([sys.executable, "-c", parent, child], env=env, capture_output=True,
                     text=True)
if out.returncode != 0 or out.stderr:
    sys.exit("FAIL: python parent exited %d: %s" % (out.returncode, out.stderr))
passed, listed = out.stdout.split("|")
want = sorted({0, 1, 2} | {int(x) for x in passed.split()})
got = [int(x) for x in listed.split()]
if got != want:
    sys.exit("FAIL: pass_fds=%s: the child has %s, want %s" % (passed.split(), got, want))
PY
echo ok
