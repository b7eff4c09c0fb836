#!/bin/sh
# holders_unit.sh - tests/python/test_holders.py (the shortcuts a report
# point takes, each checked against the plain way it replaces) under
# $PYTHON3, /opt/venv-torch2's python (torch 2.x) and each pyenv CPython
# 3.8-3.13 installed ($PYENV_ROOT, default ~/.pyenv; not free-threaded "t"
# builds): os.path.realpath differs across them (strict= since 3.10, a NUL
# byte an error since 3.10, rewritten in 3.13).
. "$TL_SRCDIR/tests/integration/lib.sh"
root=${PYENV_ROOT:-$HOME/.pyenv}
py_units test_holders.py "$PYTHON3" /opt/venv-torch2/bin/python \
    "$root"/versions/3.[89].*/bin/python3.[89] "$root"/versions/3.1[0-3].*/bin/python3.1[0-3]
