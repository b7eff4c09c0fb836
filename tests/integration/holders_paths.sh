#!/bin/sh
# holders_paths.sh - tests/python/test_paths.py (the holder paths of
# tensorleak._paths on plain objects: a suspended generator's local, a
# default argument, a closure, a class attribute, a kept traceback) under
# $PYTHON3 and each pyenv CPython 3.10-3.13 installed ($PYENV_ROOT, default
# ~/.pyenv; not free-threaded "t" builds): the frame layouts differ (a
# generator's frame is a gc referent before 3.11, not since).
. "$TL_SRCDIR/tests/integration/lib.sh"
root=${PYENV_ROOT:-$HOME/.pyenv}
py_units test_paths.py "$PYTHON3" "$root"/versions/3.1[0-3].*/bin/python3.1[0-3]
