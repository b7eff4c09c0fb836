#!/bin/sh
# cli_escape.sh - names from a trace (argv, exe, file, function, module,
# region, op, tag) with terminal escapes (OSC retitle, CSI clear, BEL, a C1
# CSI, a newline) reach no text output raw: report, check (text, JUnit) and
# diff escape each control byte as \xNN; JSON keeps the strings exactly;
# error lines escape the paths they echo.
# Exit 0 pass, 1 fail, 77 skip, 99 hard error.
. "$TL_SRCDIR/tests/integration/lib.sh"
MK="$WL/report_mktrace"
make_tmp
"$MK" --hostile h.tlt || hard_error "mktrace --hostile"

# clean FILE WHAT: no control byte but the newline, no C1 CSI, no bare 0x9b.
clean() {
    "$PYTHON3" - "$1" <<'PY' || fail "$2: raw control bytes in the output"
import sys
d = open(sys.argv[1], "rb").read()
bad = [i for i, b in enumerate(d) if (b < 0x20 and b != 0x0a) or b == 0x7f]
bad += [i for i in range(len(d) - 1) if d[i] == 0xc2 and 0x80 <= d[i + 1] <= 0x9f]
if bad:
    print("raw control bytes at", bad[:10], repr(d[max(0, bad[0] - 20):bad[0] + 20]))
    sys.exit(1)
PY
}
has() { grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "$3: missing $2"; }; }

"$TL" report h.tlt >r.txt 2>err || fail "report exited $?"
clean r.txt "report text"
has r.txt 'tensorleak: pid 4244 (ppid 1): ./prog\x1b]0;pwned\x07 --password=\x1b[2J two\x0alines c1\xc2\x9b31m' "report argv"
has r.txt '      at step\x07\x1b[5m (/w/\x1b[2Jtrain.py:41)' "report Python frame"
has r.txt '      at 0x401000 [\x1b[31mevil.so]' "report module"
has r.txt 'allocated by randn\x1b[7m at \x1b[2Jtrain.py:41' "report op and where"
has r.txt 'tags: tag\x1b[8m' "report tag"
has r.txt '  step\x1b[K: 1 iteration' "report region"

"$TL" check --trace=h.tlt >c.txt 2>err
[ $? -eq 23 ] || fail "check exit"
clean c.txt "check text"
has c.txt '  64.0 KiB in 1 block at \x1b[2Jtrain.py:41' "check where"
"$TL" check --trace=h.tlt --region="$(printf 'step\033[K')" >cr.txt 2>err
clean cr.txt "check --region text"
has cr.txt "  scope: region 'step\\x1b[K', iteration 1 of h.tlt" "check region"
"$TL" check --trace=h.tlt --format=junit >j.xml 2>err
clean j.xml "check junit"
"$PYTHON3" -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' j.xml ||
    fail "junit is not well-formed XML"
"$TL" diff h.tlt h.tlt >d.txt 2>err || fail "diff exited $?"
clean d.txt "diff text"

"$TL" report --format=json h.tlt >r.json || fail "report json"
"$PYTHON3" -c '
import json, sys
v = json.load(open("r.json"))
sys.exit(0 if v["process"]["argv"] == ["./prog\x1b]0;pwned\x07", "--password=\x1b[2J", "two\nlines", "c1\u009b31m"] else 1)' ||
    fail "JSON argv not exact"

# An error line echoing a path.
"$TL" report "$(printf 'no\033]0;x\007such.tlt')" >out 2>err
[ $? -eq 3 ] || fail "missing file exit"
clean err "error line"
has err 'tensorleak: no\x1b]0;x\x07such.tlt: No such file or directory' "error line"

# run names the traced program from its trace (its exe): a program whose
# file name carries an escape.
prog=$(printf 'tr\033[2Jue')
cp /bin/true "$prog" || hard_error "cp /bin/true"
"$TL" run --output="$TMP/run.%p.tlt" -- "./$prog" >out 2>err || fail "run exited $?"
clean err "run stderr"
has err 'tr\x1b[2Jue (pid ' "run's trace line"
exit 0
