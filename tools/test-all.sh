#!/bin/sh
# test-all.sh - README's second command: the whole test suite. Installs the
# dependencies, builds with -Werror, runs `make check`, runs the unit tests
# again under AddressSanitizer + UBSan (never the preload tests: ASan and our
# malloc cannot share a process), and runs `make distcheck`.
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

(cd build-asan && ../configure --enable-werror --disable-fuzz \
    CFLAGS="-g -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
    LDFLAGS="-fsanitize=address,undefined" &&
    make -j"$jobs" check TESTS="$(cd ../build-check && ls tests/unit/test_* | grep -v '\.' | tr '\n' ' ')") ||
    { cat build-asan/test-suite.log 2>/dev/null; exit 1; }

(cd build-check && make -j"$jobs" distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror) || exit 1
echo "test-all: all passed"
