#!/bin/sh
# hostile_cli_lines.sh - the lines `tensorleak` itself writes on stderr
# (an unknown command, run's usage errors, a command that cannot be run, a
# trace directory that cannot be written, an agent that is not there, the
# "trace of ... written to" and "other processes" lines of run and check)
# echo names a user or a program chose with their control bytes escaped as
# \xNN: an OSC retitle or a screen clear never reaches the terminal raw.
# Exit 0 pass, 1 fail, 77 skip, 99 hard error.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp

# A name with an OSC title change (ESC ] 0 ; ... BEL) and a CSI 2J.
E=$(printf 'x\033]0;pwned\007\033[2J')
# line CODE WHAT CMD...: CMD exits CODE; every stderr line is clean and
# names the escaped form.
line() {
    want=$1 what=$2
    shift 2
    "$@" </dev/null >out 2>err
    got=$?
    [ "$got" -eq "$want" ] || { cat err >&2; fail "$what: exit $got, want $want"; }
    "$PYTHON3" - err "$what" <<'PY' || exit 1
import sys
d = open(sys.argv[1], "rb").read()
bad = [i for i, b in enumerate(d) if (b < 0x20 and b != 0x0a) or b == 0x7f]
if bad:
    print("FAIL: %s: raw control bytes on stderr: %r" % (sys.argv[2], d[:300]))
    sys.exit(1)
if b"\\x1b]0;pwned\\x07\\x1b[2J" not in d:
    print("FAIL: %s: the escaped name is missing: %r" % (sys.argv[2], d[:300]))
    sys.exit(1)
PY
}
line 2 "unknown command" "$TL" "$E"
line 2 "run: unknown option" "$TL" run "--$E" -- true
line 2 "run: --format" "$TL" run "--format=$E" -- true
line 2 "run: --top" "$TL" run "--top=$E" -- true
line 6 "run: trace directory" "$TL" run --output="$TMP/$E/t.%p.tlt" -- true
line 127 "run: no such command" "$TL" run -o "$TMP/a.%p.tlt" -- "./$E"
TENSORLEAK_AGENT="$TMP/$E.so" line 1 "run: no agent" "$TL" run -o "$TMP/b.%p.tlt" -- true
# A program named with the escape: check's "trace of" line (said where the
# traces stay: --trace-output).
ln -s /bin/true "$E" || hard_error "ln"
line 0 "check: trace line" "$TL" check --output=verdict.txt --trace-output=t.%p.tlt -- "./$E"
# A trace directory named with the escape: run's "other processes" line.
mkdir "d$E" || hard_error "mkdir"
line 0 "run: other processes" "$TL" run --output="$TMP/d$E/t.%p.tlt" --report=rep.txt -- sh -c '/bin/true; exit 0'
grep -q 'other process' err || { cat err >&2; fail "run: no line about the other processes"; }
exit 0
