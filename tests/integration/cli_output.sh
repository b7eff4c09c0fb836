#!/bin/sh
# cli_output.sh - report, verdict and run report files: an existing file is
# never destroyed by a failed report, a planted symbolic link is neither
# followed nor replaced, outputs are created 0600 (they hold the program's
# argv) through a temporary renamed into place, and /dev/stdout, /dev/null
# still work. Exit 0 pass, 1 fail, 77 skip, 99 hard error.
. "$TL_SRCDIR/tests/integration/lib.sh"
MK="$WL/report_mktrace"
make_tmp
umask 022
"$MK" good.tlt && printf 'not a trace\n' >bad.tlt || hard_error "mktrace"
mkdir out && cd out || hard_error "mkdir"
G="$TMP/good.tlt" B="$TMP/bad.tlt"

# code EXPECTED WHAT CMD...
code() {
    want=$1 what=$2
    shift 2
    "$@" >"$TMP/stdout" 2>"$TMP/stderr"
    rc=$?
    [ $rc -eq "$want" ] || { cat "$TMP/stderr" >&2; fail "$what: exit $rc, expected $want"; }
    echo "ok $what (exit $rc)"
}
same() { [ "$(cat "$1")" = "$2" ] || fail "$3: $1 changed to: $(head -c 200 "$1")"; }
mode() { [ "$(stat -c %a "$1")" = 600 ] || fail "$2: $1 has mode $(stat -c %a "$1"), expected 600"; }

echo keep >F
code 4 "report --output over a file, bad trace" "$TL" report --output=F "$B"
same F keep "bad trace"
code 3 "report --output over a file, missing trace" "$TL" report --output=F "$TMP/none.tlt"
same F keep "missing trace"
code 0 "report --output over a file" "$TL" report --output=F "$G"
grep -q '^tensorleak: pid 4242 (ppid 1): ./prog --epochs=1' F || fail "report not written to F"
mode F "report --output"
code 0 "report --output new file" "$TL" report --format=json --output=new.json "$G"
mode new.json "report --output new"

echo secret >target
ln -s target link
ln -s nowhere dangling
code 6 "report --output=symlink" "$TL" report --output=link "$G"
grep -q '^tensorleak: link: cannot write: a symbolic link' "$TMP/stderr" || fail "symlink: reason"
same target secret "symlink"
[ -L link ] || fail "symlink replaced"
code 6 "report --output=dangling symlink" "$TL" report --output=dangling "$G"
[ -e nowhere ] && fail "dangling symlink followed"
code 6 "check --output=symlink" "$TL" check --max-leak=2MiB --output=link --trace="$G"
same target secret "check symlink"
code 0 "check --output" "$TL" check --max-leak=2MiB --output=V --trace="$G"
grep -q '^tensorleak check: passed' V || fail "verdict not in V"
mode V "check --output"
echo keep >V
code 4 "check --output, bad trace" "$TL" check --output=V --trace="$B"
same V keep "check bad trace"

code 0 "report --output=/dev/null" "$TL" report --output=/dev/null "$G"
code 0 "report --output=/dev/stdout" "$TL" report --output=/dev/stdout "$G"
grep -q '^tensorleak: pid 4242' "$TMP/stdout" || fail "/dev/stdout: no report on stdout"

code 0 "run --report=FILE" "$TL" run --output="$TMP/t.%p.tlt" --report=R -- true
grep -q '^tensorleak: pid ' R || fail "run report not in R"
mode R "run --report"
code 6 "run --report=symlink" "$TL" run --output="$TMP/t.%p.tlt" --report=link -- true
same target secret "run symlink"
# an empty --report is a usage error said before CMD runs (before: CMD ran,
# then "cannot write" and exit 6 in place of its status 0)
code 2 "run --report= (empty)" "$TL" run --output="$TMP/t.%p.tlt" --report= -- sh -c ': >"$1"' sh "$TMP/ran"
[ ! -e "$TMP/ran" ] || fail "run --report=: the command ran"
grep -qx 'tensorleak: run: --report needs a file name' "$TMP/stderr" ||
    fail "run --report=: $(cat "$TMP/stderr")"
# an existing file whose directory takes no new one: said so, not ENOENT
# ("No such file or directory" of /proc/version, which exists)
code 6 "check --output=/proc/version" "$TL" check --output=/proc/version -- true
grep -qx 'tensorleak: /proc/version: cannot write: its directory takes no new file (the report is written to a new file there, then renamed)' "$TMP/stderr" ||
    fail "--output=/proc/version: $(cat "$TMP/stderr")"

# a reader of stdout that leaves early (`| head -1`): the command's status
# (python's 1 for its BrokenPipeError), and one line for the report or
# verdict it could not write; before, run and check died of SIGPIPE (141)
for sub in "run --output" "check --trace-output"; do
    { "$TL" $sub="$TMP/p.%p.tlt" -- "$PYTHON3" -c \
        'for i in range(100000): print(i)' 2>"$TMP/pipe.err"; echo $? >"$TMP/pipe.rc"; } 2>/dev/null |
        head -n1 >/dev/null
    [ "$(cat "$TMP/pipe.rc")" = 1 ] || fail "$sub | head -1: exit $(cat "$TMP/pipe.rc"), want 1"
    grep -q '^tensorleak: stdout: cannot write the' "$TMP/pipe.err" ||
        fail "$sub | head -1: $(cat "$TMP/pipe.err")"
    # a command that exited 0 keeps its 0: the reader's leaving is no
    # failure (before: 141, then 6); a full disk still is (exit 6 above)
    { "$TL" $sub="$TMP/p.%p.tlt" -- sh -c 'sleep 0.3' 2>"$TMP/pipe.err"; echo $? >"$TMP/pipe.rc"; } |
        true
    [ "$(cat "$TMP/pipe.rc")" = 0 ] || fail "$sub | true: exit $(cat "$TMP/pipe.rc"), want 0"
    grep -q '^tensorleak: stdout: cannot write the' "$TMP/pipe.err" || fail "$sub | true: $(cat "$TMP/pipe.err")"
done
rm -f "$TMP"/p.*.tlt "$TMP/pipe.err" "$TMP/pipe.rc"

# Nothing left behind: only the files made above.
left=$(ls -A | tr '\n' ' ')
[ "$left" = "F R V dangling link new.json target " ] || fail "stray files: $left"
exit 0
