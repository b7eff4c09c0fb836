#!/bin/sh
# pyframes_cpython311.sh - Python frames under CPython 3.11 (pyframes_cpython.sh).
PYV=3.11
. "$TL_SRCDIR/tests/integration/pyframes_cpython.sh"
