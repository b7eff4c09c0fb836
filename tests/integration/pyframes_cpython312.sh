#!/bin/sh
# pyframes_cpython312.sh - Python frames under CPython 3.12 (pyframes_cpython.sh).
PYV=3.12
. "$TL_SRCDIR/tests/integration/pyframes_cpython.sh"
