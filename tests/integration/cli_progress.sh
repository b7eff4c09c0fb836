#!/bin/sh
# cli_progress.sh - the progress line (src/report/progress.h): report,
# check --trace and diff of an `all`-mode trace, and the reads at the end of
# run and check -- CMD, with stderr on a pseudo-terminal (Python's pty
# module), draw "tensorleak: reading 0 B of TOTAL" (TOTAL the trace's size),
# redrawn with \r, at most 10 lines a second, and cleared at the end (the
# capture ends in \r, spaces, \r); stdout is byte for byte what a run
# without a terminal writes; without a terminal, or with --quiet, stderr
# holds nothing more than it did.
# Exit 0 pass, 1 fail, 77 skip, 99 hard error.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
"$PYTHON3" -c 'import pty, tty' 2>/dev/null || skip "$PYTHON3 has no pty module"
AGENT="$TL_BUILDDIR/.libs/libtensorleak.so"
TENSORLEAK_MODE=all TENSORLEAK_OUTPUT="$TMP/big.tlt" LD_PRELOAD="$AGENT" \
    "$WL/agent_churn" 400000 >/dev/null || hard_error "churn 400000"
TENSORLEAK_MODE=all TENSORLEAK_OUTPUT="$TMP/base.tlt" LD_PRELOAD="$AGENT" \
    "$WL/agent_churn" 200000 >/dev/null || hard_error "churn 200000"

cat >ptyrun.py <<'PY'
import os, pty, re, subprocess, sys, time, tty

def size_text(n):  # report/analyze/size_text.c
    if n < 1024:
        return "%d B" % n
    v, u = n / 1024.0, 0
    while v >= 1023.95:
        v, u = v / 1024.0, u + 1
    return ("%.2f %s" if v < 9.995 else "%.1f %s") % (v, ["KiB", "MiB", "GiB", "TiB"][u])

SIZE = r"[0-9.]+ (?:B|KiB|MiB|GiB)"
LINE = re.compile(r"tensorleak: (reading|replaying) %s of %s \(\d+%%\)"
                  r"(, %s/s, ETA (\d+s|\d+m\d\ds|\d+h\d\dm))? *$" % (SIZE, SIZE, SIZE))

def run(out, err, cmd):
    """cmd with stdout to out, stderr on a raw pty (read into err); its status."""
    master, slave = pty.openpty()
    tty.setraw(slave)
    t0 = time.monotonic()
    with open(out, "wb") as o:
        p = subprocess.Popen(cmd, stdout=o, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    data = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed it
            break
        if not chunk:
            break
        data += chunk
    rc = p.wait()
    with open(err, "wb") as e:
        e.write(data)
    with open(err + ".s", "w") as e:
        e.write("%.3f\n" % (time.monotonic() - t0))
    return rc

def check(err, trace, phases):
    """The progress lines in err: well formed, the first reading's total the
    trace's size, each phase of phases seen, at most 10 a second (+1), cleared."""
    data = open(err, "rb").read().decode()
    secs = float(open(err + ".s").read())
    want = "\rtensorleak: reading 0 B of %s (0%%)" % size_text(os.path.getsize(trace))
    if want not in data:
        sys.exit("no %r in %r" % (want, data[:300]))
    if not data.endswith("\r"):
        sys.exit("the line is not cleared at the end: %r" % data[-200:])
    drawn, seen, width = 0, set(), 0
    for seg in data.split("\r"):
        body = seg.rstrip("\n")
        if not body.strip(" "):
            if body and len(body) < width:
                sys.exit("a clear of %d columns after a line of %d" % (len(body), width))
            width = 0
            continue
        m = LINE.match(body)
        if not m:
            if "\n" in seg and body.startswith("tensorleak: "):
                continue  # run's own lines ("tensorleak: trace ...")
            sys.exit("not a progress line: %r" % seg)
        drawn += 1
        seen.add(m.group(1))
        width = max(width, len(body))
    if width:
        sys.exit("the last line was not cleared")
    for ph in phases:
        if ph not in seen:
            sys.exit("phase %s not drawn (%s)" % (ph, sorted(seen)))
    if drawn > 10 * secs + 2:
        sys.exit("%d lines in %.2f s: more than 10 a second" % (drawn, secs))
    print("%d lines in %.2f s, phases %s" % (drawn, secs, sorted(seen)))

if sys.argv[1] == "run":
    sys.exit(run(sys.argv[2], sys.argv[3], sys.argv[4:]))
check(sys.argv[2], sys.argv[3], sys.argv[4:])
PY

# same NAME CMD...: CMD under a pty and without one, then with --quiet (the
# last argument before the traces is where it goes: after the subcommand).
same() {
    name=$1
    shift
    "$TL" "$@" >"$name.plain" 2>"$name.plain.err"
    prc=$?
    "$PYTHON3" ptyrun.py run "$name.tty" "$name.err" "$TL" "$@"
    trc=$?
    [ $trc -eq $prc ] || fail "$name: exit $trc under a terminal, $prc without"
    cmp "$name.tty" "$name.plain" || fail "$name: stdout differs under a terminal"
    [ -s "$name.plain" ] || fail "$name: no report on stdout"
    [ ! -s "$name.plain.err" ] || { cat "$name.plain.err" >&2; fail "$name: stderr not a terminal"; }
    sub=$1
    shift
    "$PYTHON3" ptyrun.py run "$name.q" "$name.q.err" "$TL" "$sub" --quiet "$@"
    [ $? -eq $prc ] || fail "$name --quiet: exit status"
    cmp "$name.q" "$name.plain" || fail "$name --quiet: stdout differs"
    [ ! -s "$name.q.err" ] || { od -c "$name.q.err" | head >&2; fail "$name --quiet: stderr"; }
    echo "ok $name (exit $prc)"
}

same report report big.tlt
"$PYTHON3" ptyrun.py check report.err big.tlt reading || fail "report: progress"
same json report --format=json big.tlt
"$PYTHON3" ptyrun.py check json.err big.tlt reading || fail "report json: progress"
same check check --max-leak=1GiB --trace=big.tlt
"$PYTHON3" ptyrun.py check check.err big.tlt reading || fail "check --trace: progress"
same diff diff base.tlt big.tlt
"$PYTHON3" ptyrun.py check diff.err base.tlt reading || fail "diff: progress"

# run and check -- CMD: the traces are read after CMD exits. Their own
# stderr lines vary (the trace's name), so only the progress is compared.
for sub in run check; do
    if [ "$sub" = check ]; then
        set -- --trace-output="$TMP/$sub-%p.tlt"
    else
        set -- --output="$TMP/$sub-%p.tlt"
    fi
    "$PYTHON3" ptyrun.py run "$sub-cmd.out" "$sub-cmd.err" "$TL" "$sub" "$@" -- "$WL/agent_churn" 2000
    t=$(ls "$TMP/$sub"-*.tlt | head -n1)
    "$PYTHON3" ptyrun.py check "$sub-cmd.err" "$t" reading || fail "$sub -- CMD: progress"
    ! grep -q "$(printf '\r')" "$sub-cmd.out" || fail "$sub -- CMD: a \\r on stdout"
    rm -f "$TMP/$sub"-*.tlt
    "$PYTHON3" ptyrun.py run "$sub-q.out" "$sub-q.err" "$TL" "$sub" --quiet "$@" -- "$WL/agent_churn" 2000
    ! grep -q "$(printf '\r')" "$sub-q.err" || fail "$sub --quiet -- CMD: a progress line"
    grep -q "^churn: allocations=" "$sub-q.out" || fail "$sub --quiet -- CMD: CMD's output"
    echo "ok $sub -- CMD"
done
