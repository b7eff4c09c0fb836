#!/bin/sh
# run_shim.sh - `run` through a shim: a shell script that runs helpers (env,
# basename, a subshell) and then execs the interpreter. The report is the
# interpreter's; the traces go to one new directory per run, none to the
# current one; the helpers' traces, with nothing of interest, are removed;
# one line on stderr says how many other processes were traced. Then the
# same through the first python3 on PATH when that is a pyenv-style shim.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
PY=$("$PYTHON3" -c 'import os, sys; print(os.path.realpath(sys.executable))') || hard_error "python"
cat >shim.sh <<EOF2
#!/bin/sh
env true
name=\$(basename /some/dir/prog)
( dirname /a/b >/dev/null )
exec "$PYTHON3" "\$@"
EOF2
chmod +x shim.sh
printf 'print("hello from", __name__)\n' >prog.py

# check_run NAME: run.out/run.err of one run in a fresh subdirectory NAME.
check_run() {
    [ $rc -eq 0 ] || { cat run.err >&2; fail "$1: run exited $rc"; }
    [ "$(cat run.out)" = "hello from __main__" ] || fail "$1: output $(cat run.out)"
    [ -z "$(ls | grep -v '^tensorleak-[0-9]*$' | grep -v -e run.out -e run.err -e r.json -e prog.py)" ] ||
        fail "$1: files in the current directory: $(ls)"
    set -- tensorleak-*
    [ $# -eq 1 ] && [ -d "$1" ] || fail "run made $# directories: $*"
    dir=$PWD/$1
    main=$(sed -n 's/^tensorleak: trace of \(.*\) (pid [0-9]*) written to \(.*\)$/\1 \2/p' run.err)
    [ "${main%% *}" = "$PY" ] || { cat run.err >&2; fail "main program '${main%% *}', want $PY"; }
    case "${main#* }" in "$dir"/tensorleak.*.tlt) ;; *) fail "main trace ${main#* } not in $dir" ;; esac
    [ "$(grep -c 'other process' run.err)" -eq 1 ] || { cat run.err >&2; fail "want one line on the others"; }
    [ "$(grep -c 'traced in' run.err)" -eq 0 ] || fail "a line per child trace"
    others=$(sed -n 's/^tensorleak: \([0-9]*\) other process.*/\1/p' run.err)
    [ "$others" -ge 4 ] || fail "only $others other processes and images counted"
}

mkdir a && cd a || hard_error "cd"
cp ../prog.py .
"$TL" run --format=json --report=r.json -- ../shim.sh prog.py >run.out 2>run.err
rc=$?
check_run shim
grep -qx "tensorleak: $others other processes and images traced: helpers with nothing of interest, traces removed" run.err ||
    { cat run.err >&2; fail "shim: helpers' traces not removed"; }
[ "$(ls "$dir" | wc -l)" -eq 1 ] || fail "shim: traces left: $(ls "$dir")"
"$PYTHON3" - r.json "$PY" <<'PYCHK' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
assert r["process"]["exe"] == sys.argv[2], r["process"]
assert r["end"]["point"] == "script_end", r["end"]["point"]
PYCHK

# --keep-helpers keeps every trace, in the same one directory.
cd .. && mkdir b && cd b || hard_error "cd"
cp ../prog.py .
"$TL" run --keep-helpers --format=json --report=r.json -- ../shim.sh prog.py >run.out 2>run.err
rc=$?
check_run keep
grep -qx "tensorleak: $others other processes and images traced: their traces are in $dir" run.err ||
    { cat run.err >&2; fail "keep: the line on the others"; }
[ "$(ls "$dir" | wc -l)" -eq $((others + 1)) ] || fail "keep: $(ls "$dir" | wc -l) traces for $others + 1"

echo "ok: through shim.sh, $others other processes and images"

# The first python3 on PATH, when it is a shim script (pyenv's is bash).
shim=$(command -v python3) || exit 0
head -c2 "$shim" | grep -q '#!' || exit 0
cd .. && mkdir c && cd c || hard_error "cd"
cp ../prog.py .
PY=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
"$TL" run --format=json --report=r.json -- python3 prog.py >run.out 2>run.err
rc=$?
check_run "$shim"
[ "$(ls "$dir" | wc -l)" -le 3 ] || fail "$shim: $(ls "$dir" | wc -l) traces left"
echo "ok: through $shim, $others other processes and images"
