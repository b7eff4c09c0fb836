#!/bin/sh
# pyframes_embed.sh - a CPython loaded after start (a program that
# dlopens libpython: tests/workloads/pyframes_embed.c) is found at the next
# module rescan: pyenv's 3.12 gets Python frames and an OPTIONS record
# naming it; pyenv's 3.9 gets one OPTIONS record and the report's one note.
# Each skipped when not installed ($PYENV_ROOT, default ~/.pyenv); 77 if none.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
root=${PYENV_ROOT:-$HOME/.pyenv}
ran=0
for v in 3.12 3.9; do
    home=""
    for d in "$root/versions/$v".*; do
        [ -f "$d/lib/libpython$v.so.1.0" ] && home=$d
    done
    [ -n "$home" ] || { echo "note: no libpython$v in $root/versions"; continue; }
    ran=$((ran + 1))
    PYTHONHOME="$home" TENSORLEAK_OUTPUT="$T/e$v.%p.tlt" LD_PRELOAD="$AGENT" \
        "$WL/pyframes_embed" "$home/lib/libpython$v.so.1.0" \
        'kept = bytearray(300001)
print("ok")' > "e$v.out" 2> "e$v.err" || { cat "e$v.err"; fail "$v: exited $?"; }
    [ "$(cat "e$v.out")" = ok ] && [ ! -s "e$v.err" ] || { cat "e$v.out" "e$v.err"; fail "$v: output"; }
    set -- "$T/e$v".*.tlt
    [ $# -eq 1 ] && [ -f "$1" ] || fail "$v: expected one trace: $*"
    dump_of "$1" > "e$v.d"
    # The first OPTIONS record knows no CPython; one more names it.
    [ "$(count '^options ' "e$v.d")" -eq 2 ] || { grep '^options' "e$v.d"; fail "$v: OPTIONS records"; }
    ver=$(sed -n 's/.* python =\([0-9.]*\).*/\1/p' "e$v.d")
    case $ver in "$v".*) ;; *) grep '^options' "e$v.d"; fail "$v: python=$ver" ;; esac
    "$TL_BUILDDIR/tensorleak" report "$1" > "e$v.txt" || fail "$v: report exited $?"
    if [ "$v" = 3.12 ]; then
        grep -qE '^options .* python_frames =on python =3\.12\.' "e$v.d" || fail "$v: python_frames=on"
        [ "$(count '^alloc .* size=300002 .* py=<string>:1@<module>$' "e$v.d")" -eq 1 ] \
            || { grep 'size=300002' "e$v.d"; fail "$v: the Python frame of the embedded code"; }
        [ "$(count 'Python frames' "e$v.txt")" -eq 0 ] || fail "$v: a Python-frames note"
    else
        grep -qE '^options .* python_frames =unsupported python =3\.9\.' "e$v.d" || fail "$v: python_frames=unsupported"
        [ "$(count ' py=' "e$v.d")" -eq 0 ] || fail "$v: Python frames"
        [ "$(grep -c 'Python frames' "e$v.txt")" -eq 1 ] \
            && grep -qx "note: Python frames: CPython $ver is not supported (3.10-3.13 are): native frames only" "e$v.txt" \
            || { grep note "e$v.txt"; fail "$v: the note"; }
    fi
done
[ $ran -gt 0 ] || { echo "skip: no libpython3.12 or 3.9 in $root/versions"; exit 77; }
echo "ok: $ran embedded interpreters"
