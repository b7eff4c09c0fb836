#!/bin/sh
# pyframes_cpython310.sh - Python frames under CPython 3.10 (pyframes_cpython.sh).
PYV=3.10
. "$TL_SRCDIR/tests/integration/pyframes_cpython.sh"
