#!/bin/sh
# pyframes_unsupported.sh - a CPython the agent does not read runs as
# ever with native frames only, and the report says so in ONE note naming
# the version. Fake interpreters (tests/workloads/pyframes_fake_cpython.c):
# 3.14.0, 3.10.0b2 (Py_GetVersion only), a 3.12.1 debug build, a 3.13.0
# free-threaded build, a 3.13.0 whose _PyRuntime is not 3.13's. Real ones:
# pyenv's ($PYENV_ROOT, default ~/.pyenv) 3.9 and 2.7, each skipped when not
# installed; TENSORLEAK_PYTHON_FRAMES=0 gives no note.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
TL="$TL_BUILDDIR/tensorleak"
cd "$T" || exit 99
unset PYTHONPATH TENSORLEAK_PYTHON_DIR

# run NAME WANT_OUT WANT_NOTE CMD...: CMD under the agent prints exactly
# WANT_OUT (a regex) and nothing on stderr, exits 0, has no Python frames;
# its report has exactly the note WANT_NOTE ("" = no Python-frames note) in
# text and JSON.
run() {
    name=$1 want_out=$2 want_note=$3
    shift 3
    TENSORLEAK_OUTPUT="$T/$name.%p.tlt" LD_PRELOAD="$AGENT" "$@" > "$name.out" 2> "$name.err" \
        || fail "$name: exited $?"
    [ -s "$name.err" ] && { cat "$name.err"; fail "$name: output on stderr"; }
    grep -qxE "$want_out" "$name.out" && [ "$(wc -l < "$name.out")" -eq 1 ] \
        || { cat "$name.out"; fail "$name: the program's output"; }
    set -- "$T/$name".*.tlt
    [ $# -eq 1 ] && [ -f "$1" ] || fail "$name: expected one trace: $*"
    dump_of "$1" > "$name.d"
    [ "$(count '^pyframe ' "$name.d")" -eq 0 ] && [ "$(count ' py=' "$name.d")" -eq 0 ] \
        || fail "$name: Python frames"
    grep -qE '^end .* dropped=0$' "$name.d" || fail "$name: END counters"
    "$TL" report "$1" > "$name.txt" || fail "$name: report exited $?"
    "$TL" report --format=json "$1" > "$name.json" || fail "$name: JSON report exited $?"
    if [ -z "$want_note" ]; then
        [ "$(count 'Python frames' "$name.txt")" -eq 0 ] || fail "$name: a Python-frames note"
        [ "$(count 'Python frames' "$name.json")" -eq 0 ] || fail "$name: a Python-frames note (JSON)"
        return
    fi
    [ "$(grep -c 'Python frames' "$name.txt")" -eq 1 ] && grep -qxF "note: $want_note" "$name.txt" \
        || { grep note "$name.txt"; fail "$name: want the note: $want_note"; }
    [ "$(grep -o 'Python frames' "$name.json" | wc -l)" -eq 1 ] && grep -qF "\"$want_note\"" "$name.json" \
        || { grep -A3 '"notes"' "$name.json"; fail "$name: want the JSON note: $want_note"; }
}

not_read="is not supported (3.10-3.13 are): native frames only"
not_build="is not supported (the default builds of 3.10-3.13 are): native frames only"
fake='fake 0x[0-9a-f]+'
run f314 "$fake" "Python frames: CPython 3.14.0 $not_read" "$WL/pyfake_314"
grep -qE '^options .* python_frames =unsupported python =3\.14\.0$' f314.d || { grep '^options' f314.d; fail "f314: OPTIONS"; }
run f310b2 "$fake" "Python frames: CPython 3.10.0b2 $not_read" "$WL/pyfake_310b2"
run f312d "$fake" "Python frames: CPython 3.12.1 (debug build) $not_build" "$WL/pyfake_312d"
grep -qE '^options .* python =3\.12\.1 python_build =debug.build$' f312d.d || { grep '^options' f312d.d; fail "f312d: OPTIONS"; }
run f313t "$fake" "Python frames: CPython 3.13.0 (free-threaded build) $not_build" "$WL/pyfake_313t"
run f313u "$fake" "Python frames: CPython 3.13.0 (unknown build) $not_build" "$WL/pyfake_313u"
TENSORLEAK_PYTHON_FRAMES=0 run f314off "$fake" "" "$WL/pyfake_314"
grep -qE '^options .* python_frames =off python =3\.14\.0$' f314off.d || { grep '^options' f314off.d; fail "f314off: OPTIONS"; }

root=${PYENV_ROOT:-$HOME/.pyenv}
real=0
for v in 3.9 2.7; do
    PY=""
    for d in "$root/versions/$v".*; do
        [ -x "$d/bin/python$v" ] && PY="$d/bin/python$v"
    done
    [ -n "$PY" ] || { echo "note: no CPython $v in $root/versions, not run"; continue; }
    real=$((real + 1))
    ver=$("$PY" -c 'import platform; print(platform.python_version())')
    # The agent's Python package is not put on PYTHONPATH for these.
    run "py$v" "ok None" "Python frames: CPython $ver $not_read" \
        "$PY" -c 'import os; kept = bytearray(300001); print("ok %s" % os.environ.get("PYTHONPATH"))'
    [ "$(count '^alloc .* size=300002 ' "py$v.d")" -eq 1 ] || fail "py$v: the bytearray's allocation"
done
echo "ok: 6 fake interpreters, $real real ones"
