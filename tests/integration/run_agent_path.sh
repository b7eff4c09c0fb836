#!/bin/sh
# run_agent_path.sh - the agent's path reaches every process whole. A
# relative TENSORLEAK_AGENT is made absolute: before, a child started after
# its parent changed directory was not traced, and ld.so printed "cannot be
# preloaded" into the program's stderr. A path with a space (LD_PRELOAD
# splits its list there) is refused with one line, exit 1, and the command
# does not run: before, it ran untraced with ld.so's errors in its stderr.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
agent="$TL_BUILDDIR/.libs/libtensorleak.so"
[ -r "$agent" ] || skip "no agent in the build tree"
mkdir -p sub "a b" || hard_error "mkdir"
cp "$agent" sub/libtensorleak.so && cp "$agent" "a b/libtensorleak.so" || hard_error "cp"

cat >cd_child.py <<'PY'
import os, subprocess, sys
os.chdir("/")
subprocess.run([sys.executable, "-c", "print('child')"], check=True)
PY
TENSORLEAK_AGENT=sub/libtensorleak.so "$TL" run --output="$TMP/t.%p.tlt" -- "$PYTHON3" cd_child.py >out 2>err
rc=$?
[ $rc -eq 0 ] || { cat out err >&2; fail "relative agent: exit $rc, want 0"; }
grep -q "preloaded\|ld.so" out err && { cat out err >&2; fail "relative agent: ld.so's error in the program's output"; }
grep -qx child out || { cat out >&2; fail "relative agent: the child's line"; }
n=$(ls t.*.tlt | wc -l)
[ "$n" -eq 2 ] || { ls >&2; fail "relative agent: $n traces, want 2 (the child untraced)"; }

TENSORLEAK_AGENT="$TMP/a b/libtensorleak.so" "$TL" run --output="$TMP/s.%p.tlt" -- sh -c "touch ran" >out 2>err
rc=$?
[ $rc -eq 1 ] || { cat out err >&2; fail "space: exit $rc, want 1"; }
[ "$(wc -l <err)" -eq 1 ] || { cat err >&2; fail "space: not one line on stderr"; }
grep -q "^tensorleak: the agent's path has a space or a colon, which LD_PRELOAD cannot carry: $TMP/a b/libtensorleak.so" err ||
    { cat err >&2; fail "space: the line"; }
[ -e ran ] && fail "space: the command ran"
exit 0
