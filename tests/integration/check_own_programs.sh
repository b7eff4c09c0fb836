#!/bin/sh
# check_own_programs.sh - a program the run built in its working directory
# is the project's own (tools/project.h): a Python driver's C test binary
# is checked whatever it made. Before, a C helper that made no storage and
# no block of 64 KiB or more was a "helper with nothing of interest", left
# out: `check -- python3 driver.py` passed (exit 0) with 292 B lost in the
# binary it ran, and with 57 MiB lost in blocks of 60 KB (a helper's break
# test, 3 runs of 3). One in a Python environment (a venv's, a package's
# bundled binary) or out of the working directory is still left out when it
# made nothing of interest; check --trace=DIR of the kept run judges alike.
# A Python environment's program is a third party's tool, never checked.
# Also the project's: a program run by a path under the project (bazel's
# bazel-bin symlink into its cache: before, left out, exit 0) and one in
# pytest's temporary directories (a binary a test built in tmp_path).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
mkdir -p bin venv/bin sub
cp "$TL_BUILDDIR/tests/workloads/leak_kinds" bin/ && cp bin/leak_kinds venv/bin/ ||
    hard_error "cannot copy leak_kinds"
: >venv/pyvenv.cfg
cat >driver.py <<'PY'
import os, subprocess, sys
subprocess.run([os.path.abspath(sys.argv[1])], check=True)
PY
own_line='^process [0-9]+ \(helper of [0-9]+\) leak_kinds: FAILED: 1 of 1 limit exceeded$'
left_out='^not checked: 1 helper process with nothing of interest'

"$TL" check --max-leak=0 -- "$PYTHON3" driver.py bin/leak_kinds >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "own: exit $rc, want 23"; }
grep -Eq "$own_line" out || { cat out >&2; fail "own: the program's line"; }
grep -q '  FAIL max-leak: 292 B definitely lost or indirectly lost' out ||
    { cat out >&2; fail "own: not 292 B"; }
recheck_kept own
grep -Eq "$own_line" out || { cat out >&2; fail "own, --trace=DIR: the program's line"; }
rm -rf tensorleak-*

# in a Python environment under the working directory: left out
"$TL" check --max-leak=0 -- "$PYTHON3" driver.py venv/bin/leak_kinds >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "venv: exit $rc, want 0"; }
grep -Eq "$left_out" out || { cat out >&2; fail "venv: not left out"; }

# a third party's tool (a venv's, like triton's ptxas or nvcc) is a tool
# even when it made a big block: its lost 100000 B are not the program's
# (before: checked, exit 23); the project's own copy is checked (97.7 KiB)
cp "$TL_BUILDDIR/tests/workloads/check_leaks" venv/bin/ && cp venv/bin/check_leaks bin/ ||
    hard_error "cannot copy check_leaks"
cat >big.py <<'PY'
import os, subprocess, sys
subprocess.run([os.path.abspath(sys.argv[1]), "biglost"], check=True)
PY
"$TL" check --max-leak=0 -- "$PYTHON3" big.py venv/bin/check_leaks >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "venv tool: exit $rc, want 0"; }
grep -Eq "$left_out" out || { cat out >&2; fail "venv tool: not left out"; }
"$TL" check --max-leak=0 -- "$PYTHON3" big.py bin/check_leaks >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "own big: exit $rc, want 23"; }
grep -Eq '^process [0-9]+ \(helper of [0-9]+\) check_leaks biglost: FAILED: 1 of 1 limit exceeded$' out ||
    { cat out >&2; fail "own big: its line"; }
grep -q '  FAIL max-leak: 97.7 KiB definitely lost' out || { cat out >&2; fail "own big: not 97.7 KiB"; }
rm -rf tensorleak-*

# out of the working directory: left out
cd sub || hard_error "no sub"
"$TL" check --max-leak=0 -- "$PYTHON3" ../driver.py ../bin/leak_kinds >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "out of cwd: exit $rc, want 0"; }
grep -Eq "$left_out" out || { cat out >&2; fail "out of cwd: not left out"; }

# run by a path under the project, its real path elsewhere (bazel-bin), or
# built in pytest's tmp_path: the project's own, checked (before: exit 0)
cd "$TMP" && mkdir -p proj cache/bin pytest-of-ci/pytest-0/test_leak0 || hard_error "mkdir"
cp bin/leak_kinds cache/bin/ && cp bin/leak_kinds pytest-of-ci/pytest-0/test_leak0/ ||
    hard_error "cannot copy leak_kinds"
ln -s ../cache/bin proj/bazel-bin || hard_error "ln"
cd proj || hard_error "no proj"
for how in bazel-bin/leak_kinds ../pytest-of-ci/pytest-0/test_leak0/leak_kinds; do
    "$TL" check --max-leak=0 -- "$PYTHON3" ../driver.py "$how" >out 2>err
    rc=$?
    [ $rc -eq 23 ] || { cat out err >&2; fail "$how: exit $rc, want 23"; }
    grep -Eq "$own_line" out || { cat out >&2; fail "$how: the program's line"; }
    grep -q '  FAIL max-leak: 292 B definitely lost or indirectly lost' out ||
        { cat out >&2; fail "$how: not 292 B"; }
    recheck_kept "$how"
    grep -Eq "$own_line" out || { cat out >&2; fail "$how, --trace=DIR: the program's line"; }
    rm -rf tensorleak-*
done
# the same copy by its real path, out of the project: left out
"$TL" check --max-leak=0 -- "$PYTHON3" ../driver.py ../cache/bin/leak_kinds >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "real path: exit $rc, want 0"; }
grep -Eq "$left_out" out || { cat out >&2; fail "real path: not left out"; }
exit 0
