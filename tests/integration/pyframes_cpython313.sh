#!/bin/sh
# pyframes_cpython313.sh - Python frames under CPython 3.13 (pyframes_cpython.sh).
PYV=3.13
. "$TL_SRCDIR/tests/integration/pyframes_cpython.sh"
