#!/bin/sh
# quickstart.sh - README's first command: install dependencies, build into
# ./build, and run tensorleak on the bundled PyTorch training loop.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
sh tools/install-deps.sh
[ -x configure ] || autoreconf -fi
mkdir -p build
cd build
[ -f Makefile ] || ../configure
make -j"$(nproc)"
exec ./tensorleak run --output="$top/build/train_mlp.%p.tlt" -- /usr/bin/python3 ../examples/train_mlp.py
