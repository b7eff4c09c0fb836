#!/bin/sh
# test-all.sh - README's second command: the whole test suite. Installs the
# dependencies, builds with -Werror, runs `make check`, runs the unit tests
# again under AddressSanitizer + UBSan (never the preload tests: ASan and our
# malloc cannot share a process), runs the Python-dependent tests a second
# time against pip's torch 2.x in a virtual environment (made once, then
# reused from ~/.cache/tensorleak), and runs `make distcheck`.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh tools/install-deps.sh
autoreconf -fi
jobs=$(nproc)

rm -rf build-check build-asan
mkdir build-check build-asan
(cd build-check && ../configure --enable-werror && make -j"$jobs" &&
    make -j"$jobs" check) || { cat build-check/test-suite.log 2>/dev/null; exit 1; }

# torch 2.x from pip: a venv of CPython 3.11 (pyenv's, else Debian's with
# python3-venv), the cp311 wheel of torch $TORCH2; every integration test that
# runs Python, again, with PYTHON3 pointing into it.
TORCH2=${TENSORLEAK_TORCH2:-2.13.0}
venv=${TENSORLEAK_TORCH2_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/tensorleak/venv-torch-$TORCH2}
if ! "$venv/bin/python" -c "import numpy, pytest, torch, sys
sys.exit(torch.__version__.split('+')[0] != '$TORCH2')" 2>/dev/null; then
    py311=""
    for c in "$(pyenv root 2>/dev/null || echo "$HOME/.pyenv")"/versions/3.11*/bin/python3.11 /usr/bin/python3.11; do
        [ -x "$c" ] && py311=$c
    done
    [ -n "$py311" ] || { echo "test-all: no CPython 3.11 for the torch $TORCH2 venv"; exit 1; }
    rm -rf "$venv"
    "$py311" -m venv "$venv" && "$venv/bin/python" -m pip install -q "torch==$TORCH2" numpy pytest ||
        { echo "test-all: cannot make the torch $TORCH2 venv at $venv"; exit 1; }
fi
# pytest-xdist for the pytest plugin's test (skipped there without it)
"$venv/bin/python" -c "import xdist" 2>/dev/null ||
    "$venv/bin/python" -m pip install -q pytest-xdist || echo "test-all: no pytest-xdist"
py_tests=$(for t in $(grep -lE 'PYTHON3|need_torch|run_case' tests/integration/*.sh); do
    case $t in */lib.sh | */agent_lib.sh) ;; *) grep -qF "$t" tests/*.mk && echo "$t" ;; esac
done | tr '\n' ' ')
(cd build-check && make -j"$jobs" check PYTHON3="$venv/bin/python" TESTS="$py_tests") ||
    { cat build-check/test-suite.log 2>/dev/null; exit 1; }

(cd build-asan && ../configure --enable-werror --disable-fuzz \
    CFLAGS="-g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
    LDFLAGS="-fsanitize=address,undefined" &&
    make -j"$jobs" check TESTS="$(cd ../build-check && ls tests/unit/test_* | grep -v '\.' | tr '\n' ' ')") ||
    { cat build-asan/test-suite.log 2>/dev/null; exit 1; }

(cd build-check && make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror) || {
    cat build-check/tensorleak-*/_build/sub/test-suite.log 2>/dev/null; exit 1; }
echo "test-all: all passed"
