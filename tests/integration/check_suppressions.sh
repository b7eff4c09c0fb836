#!/bin/sh
# check_suppressions.sh - LSan-format suppressions: function, file and module
# patterns, * wildcards, ^/$ anchors, comments, several files, the bytes and
# blocks each rule hid, the default list (stdio buffers) and turning it off.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
export TENSORLEAK_MODE=all # traces made by `run` record every block, as check does
LEAKS="$WL/check_leaks"
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
"$TL" run -o "$TMP/t.%p.tlt" -- "$LEAKS" leak >/dev/null 2>&1 || fail "run failed"
set -- "$TMP"/t.*.tlt
T=$1

verdict() { # verdict NAME RULES...: check T with a file of RULES, JSON to NAME.json
    name=$1
    shift
    printf '%s\n' "$@" >"$name.supp"
    "$TL" check --trace="$T" --format=json --output="$name.json" --max-leak=0 \
        --suppressions="$name.supp" >/dev/null 2>err
    rc=$?
    [ $rc -eq 0 ] || [ $rc -eq 23 ] || { cat err >&2; fail "$name: exit $rc"; }
}
# by function name (a substring, as LSan matches)
verdict fn '# the known one' '' 'leak:leak_a'
$J fn.json 'limit("max-leak")["measured_bytes"] == 2000' \
    'supp("leak_a")["bytes"] == 1000' 'supp("leak_a")["blocks"] == 1' \
    'supp("leak_a")["line"] == 3' 'supp("leak_a")["source"] == "fn.supp"' || fail "function"
# anchored: ^leak_b$ matches the function leak_b only
verdict anchor 'leak:^leak_b$'
$J anchor.json 'limit("max-leak")["measured_bytes"] == 1000' 'supp("^leak_b$")["bytes"] == 2000' ||
    fail "anchored"
# wildcard
verdict wild '  leak:leak_*  '
$J wild.json 'limit("max-leak")["measured_bytes"] == 0' 'v["passed"]' \
    'supp("leak_*")["bytes"] == 3000' 'supp("leak_*")["blocks"] == 2' || fail "wildcard"
# by source file (every frame of main's file)
verdict file 'leak:check_leaks.c'
$J file.json 'limit("max-leak")["measured_bytes"] == 0' 'supp("check_leaks.c")["bytes"] == 3000' ||
    fail "file"
# by module: the program's path ends in /check_leaks; no source file does
verdict module 'leak:*/check_leaks$'
$J module.json 'limit("max-leak")["measured_bytes"] == 0' 'supp("*/check_leaks$")["bytes"] == 3000' ||
    fail "module"
# a pattern that matches nothing hides nothing
verdict none 'leak:no_such_function'
$J none.json 'limit("max-leak")["measured_bytes"] == 3000' 'supp("no_such_function")["bytes"] == 0' ||
    fail "no match"
# several files: each rule credited with what it hid, first match wins
printf 'leak:leak_a\n' >one.supp
printf '# second file\nleak:leak_b\nleak:leak_*\n' >two.supp
"$TL" check --trace="$T" --format=json --output=two.json --max-leak=0 --suppressions=one.supp \
    --suppressions=two.supp >/dev/null 2>err || { cat err >&2; fail "two files: exit $?"; }
$J two.json 'v["passed"]' 'supp("leak_a")["bytes"] == 1000' 'supp("leak_b")["bytes"] == 2000' \
    'supp("leak_b")["line"] == 2' 'supp("leak_*")["bytes"] == 0' 'v["suppressed_bytes"] == 3000' ||
    fail "two files"
# text: what each rule hid
"$TL" check --trace="$T" --max-leak=0 --suppressions=one.supp >out 2>&1
grep -q '^  1000 B in 1 block: leak:leak_a (one.supp:1)$' out || fail "text: $(cat out)"
# malformed files: exit 2 with FILE:LINE
for bad in 'leak_a' 'interceptor_via_fun:x' 'leak:' 'leak'; do
    printf '# ok\nleak:fine\n%s\n' "$bad" >bad.supp
    "$TL" check --trace="$T" --suppressions=bad.supp >out 2>err
    [ $? -eq 2 ] || fail "'$bad' accepted"
    grep -q '^tensorleak: bad.supp:3: ' err || fail "'$bad': $(cat err)"
done
# defaults: a program that prints (stdio buffer) and leaks nothing passes
# --max-leak=0; without the defaults its buffer is a leak
"$TL" check --max-leak=0 --format=json --output=d.json -- "$LEAKS" print >out 2>err ||
    { cat out err >&2; fail "print with defaults: exit $?"; }
$J d.json 'v["passed"]' 'supp("^_IO_file_doallocate$")["blocks"] == 1' \
    'supp("^_IO_file_doallocate$")["source"] == "default"' || fail "default stdio rule"
"$TL" check --max-leak=0 --no-default-suppressions --format=json --output=n.json \
    -- "$LEAKS" print >out 2>err
[ $? -eq 23 ] || fail "print without defaults: want 23"
$J n.json 'limit("max-leak")["measured_bytes"] == 4096' 'v["suppressions"] == []' \
    'limit("max-leak")["sites"][0]["bytes"] == 4096' || fail "no defaults"
exit 0
