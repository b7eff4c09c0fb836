#!/bin/sh
# pip_wheel.sh - issue 25: tools/build-wheel.sh builds one manylinux
# py3-none wheel of this tree (auditwheel show: consistent with its tag) and
# the sdist (from which pip builds a wheel). pip installs the wheel into a
# fresh venv of CPython 3.12 (3.11 where pip has no CPU torch 2.13.0 for
# 3.12: PyPI's is the CUDA build, GBs) with torch 2.13.0 and pytest. There,
# the venv's `tensorleak`: --version is AC_INIT's (so is the wheel's name);
# ldd finds jemalloc, libunwind, libdw, libelf and libzstd in the wheel's
# tensorleak.libs/, never the system's; it profiles the bundled example with
# its storages at the right lines (graphs kept by autograd, batches pinned by
# views); `check` exits 23 on its leak; `python -m tensorleak` works; the
# agent hides the package's own frames; pytest loads the plugin by its entry
# point (its options, a leaking test fails with 23 under the agent) and
# without the agent does nothing. A second venv, of CPython 3.13 or 3.10 (no
# torch for them here: numpy from pip), profiles a numpy program with its
# storages at the right lines.
# Costs about two minutes (two builds, two venvs, torch from the machine's
# wheels). Skipped under make distcheck (its source tree is read-only, and
# the first make check did all this), and without a second CPython or a
# network for auditwheel. It makes venvs of its own, so test-all.sh does not
# run it a second time against its torch venv.
. "$TL_SRCDIR/tests/integration/lib.sh"
# by its mode, not test -w: CI runs as root, who may write anyway
[ -n "$(find "$TL_SRCDIR" -maxdepth 0 -perm -u+w)" ] ||
    skip "read-only source tree (make distcheck): the first make check built and tested the wheel"
pyenv_root=$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")
first_py() { # first_py VERSION...: the first interpreter there, pyenv's then /usr/bin's
    for _v in "$@"; do
        for _p in "$pyenv_root"/versions/"$_v".*/bin/python"$_v" /usr/bin/python"$_v"; do
            [ -x "$_p" ] && { echo "$_p"; return 0; }
        done
    done
    return 1
}
other_py=$(first_py 3.13 3.10) || skip "no CPython 3.13 or 3.10 for the second venv"
make_tmp
export PIP_DISABLE_PIP_VERSION_CHECK=1
# fresh_venv DIR PY: a new venv of the interpreter PY
fresh_venv() {
    rm -rf "$1"
    "$2" -m venv "$1" || hard_error "$2 -m venv $1"
}
# cpu_torch DIR: the venv's pip finds a CPU build of torch (no nvidia-* requirement)
cpu_torch() {
    "$1/bin/python" -m pip install -q --dry-run --no-deps --report "$TMP/torch.json" \
        torch==2.13.0 >/dev/null 2>&1 &&
        "$1/bin/python" -c 'import json, sys
t = json.load(open(sys.argv[1]))["install"][0]["metadata"]
sys.exit(any(r.startswith("nvidia-") for r in t.get("requires_dist", [])))' "$TMP/torch.json"
}
V=$TMP/v1
torch_py=""
for v in 3.12 3.11; do
    p=$(first_py $v) || continue
    fresh_venv "$V" "$p"
    cpu_torch "$V" && { torch_py=$p && break; }
    echo "no CPU torch 2.13.0 for CPython $v from pip" >&2
done
[ -n "$torch_py" ] || fail "no CPython 3.12 or 3.11 with a CPU torch 2.13.0 from pip"

VERSION=$(sed -n 's/^AC_INIT(\[tensorleak\], \[\([^]]*\)\].*/\1/p' "$TL_SRCDIR/configure.ac")
[ -n "$VERSION" ] || hard_error "no AC_INIT version in configure.ac"
sh "$TL_SRCDIR/tools/build-wheel.sh" "$TMP/dist" >wheel.path 2>wheel.err || {
    rc=$?
    cat wheel.err >&2
    [ $rc -eq 2 ] && skip "build-wheel.sh cannot get auditwheel (no network?)"
    fail "build-wheel.sh exited $rc"
}
WHL=$(tail -n1 wheel.path)
case $(basename "$WHL") in
tensorleak-"$VERSION"-py3-none-manylinux_2_*_x86_64.whl) ;;
*) fail "wheel $WHL: want tensorleak-$VERSION-py3-none-manylinux_2_NN_x86_64.whl" ;;
esac
# auditwheel show's lines are wrapped
tr -s ' \n' '  ' <wheel.err | grep -q 'is consistent with the following platform tag: "manylinux_2_' ||
    fail "auditwheel show: $(cat wheel.err)"

# the sdist: make dist's tarball with PKG-INFO, from which pip builds a wheel
SDIST=$TMP/dist/tensorleak-$VERSION.tar.gz
tar tzf "$SDIST" >sdist.list || fail "no sdist $SDIST"
for f in PKG-INFO pyproject.toml configure tools/tensorleak_build.py src/python/tensorleak/__main__.py; do
    grep -qx "tensorleak-$VERSION/$f" sdist.list || fail "sdist without $f"
done

# pip_in DIR PACKAGES...: pip installs PACKAGES into the venv DIR
pip_in() {
    _dir=$1
    shift
    "$_dir/bin/python" -m pip install -q "$@" >"$_dir.log" 2>&1 ||
        { cat "$_dir.log" >&2; fail "pip install $* into $_dir"; }
}
pip_in "$V" "$WHL" torch==2.13.0 pytest
SITE=$("$V/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
echo "wheel $(basename "$WHL"), venv of $("$V/bin/python" -V) at $V"
[ "$("$V/bin/tensorleak" --version)" = "tensorleak $VERSION" ] ||
    fail "tensorleak --version: $("$V/bin/tensorleak" --version)"
[ "$("$V/bin/python" -m tensorleak --version)" = "tensorleak $VERSION" ] ||
    fail "python -m tensorleak --version"
AGENT=$SITE/tensorleak/libtensorleak.so
ldd "$AGENT" >ldd.out || fail "ldd $AGENT"
ldd "$SITE/tensorleak/_bin/tensorleak" >>ldd.out || fail "ldd of the CLI"
for lib in libjemalloc libunwind libdw libelf libzstd; do
    grep -q "$lib-[^ ]* => $SITE/tensorleak/[^ ]*tensorleak.libs/$lib-" ldd.out ||
        fail "$lib not the wheel's: $(cat ldd.out)"
done
grep -E '=> /(usr/)?lib(64)?/[^ ]*lib(jemalloc|unwind|dw|elf|lzma|bz2|zstd)[.-]' ldd.out &&
    fail "one of the vendored libraries from the system"

# the example: its storages by line, as README tells
EX="$TL_SRCDIR/examples/train_mlp.py"
"$V/bin/tensorleak" run --output="$TMP/ex.%p.tlt" --format=json --report=ex.json -- \
    "$V/bin/python" "$EX" >ex.out 2>ex.err || { cat ex.err >&2; fail "run example: exit $?"; }
grep -q '^train_mlp: 4 validation losses kept' ex.out || fail "example: $(cat ex.out)"
VAL=$(grep -n '^ *val_loss = loss_fn(model(val_x)' "$EX" | cut -d: -f1)
BATCH=$(grep -n '^ *batch = torch.randn' "$EX" | cut -d: -f1)
VIEW=$(grep -n '^ *first_rows.append(batch\[:1\])' "$EX" | cut -d: -f1)
PYTHONPATH="$TL_SRCDIR/tests/integration" "$V/bin/python" - "$EX" ex.json "$VAL" "$BATCH" "$VIEW" <<'PY' || exit 1
import json, sys
from sites import fail, live_by_line, script_lines
ex, rep = sys.argv[1], json.load(open(sys.argv[2]))
val, batch, view = map(int, sys.argv[3:])
live = live_by_line(rep, ex)
graphs = sorted((s["kind"], s["bytes"]) for s in live.get(val, []) if s["held_by"] == "autograd")
if graphs.count(("c10", 2097152)) != 4:
    fail(f"line {val}: autograd-held storages {graphs}, want 4 of 2 MiB")
pinned = [s for s in live.get(batch, []) if s["held_by"] == "view"]
got = [(s["bytes"], s["pinned_bytes"], [(v["bytes"], script_lines(v["stack"], ex)[:1]) for v in s["views"]])
       for s in pinned]
if got != [(131072, 130560, [(512, [view])])] * 4:
    fail(f"line {batch}: view-pinned storages {got}, want 4 of 128 KiB, a 512 B view at line {view}")
print(f"example: 4 graphs of 2 MiB at line {val}, 4 batches pinned at line {batch} by views at {view}")
PY
"$V/bin/tensorleak" check --max-leak-storage=0 -- "$V/bin/python" "$EX" >check.out 2>check.err
rc=$?
[ $rc -eq 23 ] || { cat check.out check.err >&2; fail "check on the example: exit $rc, want 23"; }
grep -q "^  FAIL max-leak-storage: " check.out || fail "check: $(cat check.out)"
# the package's own frames are the agent's (python/ inside it: agent.c)
printf 'import tensorleak\nkeep = bytearray(300000)\ntensorleak.snapshot("here")\n' >snap.py
TENSORLEAK_MODE=all "$V/bin/python" -m tensorleak run --output="$TMP/s.%p.tlt" --frames=all \
    -- "$V/bin/python" snap.py >snap.out 2>snap.err || { cat snap.err >&2; fail "snap.py: exit $?"; }
grep -q "at <module> ($TMP/snap.py:2)" snap.out || fail "snap.py: no frame of line 2: $(cat snap.out)"
grep "$SITE/tensorleak/" snap.out && fail "frames of the installed package in the report"

# pytest: the plugin by its entry point, no -p
TESTS="$TL_SRCDIR/tests/workloads/check_plugin"
"$V/bin/python" -m pytest --help >help.out 2>&1 || fail "pytest --help: $(cat help.out)"
grep -q -- '--tensorleak-max-leak=SIZE' help.out || fail "pytest --help has no --tensorleak-max-leak"
"$V/bin/python" -m pytest -q -p no:cacheprovider "$TESTS" -k "not broken" >pt.out 2>&1 ||
    fail "pytest without the agent: exit $?: $(cat pt.out)"
grep -q '^3 passed, 1 deselected in ' pt.out || fail "pytest without the agent (no warning either): $(cat pt.out)"
TENSORLEAK_MODE=all "$V/bin/tensorleak" run --output="$TMP/p.%p.tlt" -- \
    "$V/bin/python" -m pytest -q -p no:cacheprovider "$TESTS" -k "not broken" >pt.out 2>pt.err
rc=$?
[ $rc -eq 23 ] || { cat pt.out pt.err >&2; fail "pytest under the agent: exit $rc, want 23"; }
grep -q '^FAILED .*test_plugin.py::test_leaks' pt.out || fail "test_leaks not failed: $(cat pt.out)"
grep -q '^tensorleak: the test body exceeded its limits: max-leak: 293.0 KiB live' pt.out ||
    fail "pytest under the agent: $(cat pt.out)"
grep -q 'PytestAssertRewriteWarning' pt.out && fail "pytest under the agent warns: $(cat pt.out)"

# pip builds a wheel from the sdist (configure, make: the -dev packages are here)
"$V/bin/python" -m pip wheel -q --no-deps -w "$TMP/sdw" "$SDIST" >sdw.log 2>&1 ||
    { cat sdw.log >&2; fail "pip wheel of the sdist"; }
[ -f "$TMP/sdw/tensorleak-$VERSION-py3-none-linux_x86_64.whl" ] || fail "from the sdist: $(ls "$TMP/sdw")"

# the second venv: another CPython, numpy's storages by line
fresh_venv "$TMP/v2" "$other_py"
pip_in "$TMP/v2" "$WHL" numpy
NP="$TL_SRCDIR/tests/workloads/numpy_handler.py"
"$TMP/v2/bin/tensorleak" run --output="$TMP/n.%p.tlt" --format=json --report=np.json -- \
    "$TMP/v2/bin/python" "$NP" >np.out 2>np.err || { cat np.err >&2; fail "numpy run: exit $?"; }
PYTHONPATH="$TL_SRCDIR/tests/integration" "$V/bin/python" - "$NP" np.json <<'PY' || exit 1
import json, sys
from sites import fail, live_by_line, site_lines
script, rep = sys.argv[1], json.load(open(sys.argv[2]))
site = site_lines(script)
got = {line: (ss[0]["kind"], ss[0]["bytes"], ss[0]["held_by"]) for line, ss in live_by_line(rep, script).items()}
want = {"small": ("numpy", 128, "tensor"), "big": ("numpy", 67108864, "view"), "thread": ("numpy", 256, "tensor")}
for name, w in want.items():
    if got.get(site[name]) != w:
        fail(f"{name} (line {site[name]}): {got.get(site[name])}, want {w}")
print("second venv: numpy storages at their lines", {k: got[site[k]][1] for k in want})
PY
echo "ok: $(basename "$WHL") in venvs of $("$V/bin/python" -V) and $("$TMP/v2/bin/python" -V)"
