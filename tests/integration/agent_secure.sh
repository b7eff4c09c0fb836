#!/bin/sh
# agent_secure.sh - a setuid-root program run by an unprivileged user with
# the agent preloaded ignores TENSORLEAK_OUTPUT (and every TENSORLEAK_*):
# no root-owned trace appears in a root-only directory, nor in the cwd.
#
# ld.so preloads into a secure-execution process only a library from a
# trusted directory that has its set-user-ID bit, named without a slash:
# so this test installs a uniquely named copy of the agent into libc's
# directory for the run and removes it on exit. It runs only as root, with
# setpriv(1) and the user nobody; else it is skipped (77). It never touches
# /etc/ld.so.preload or /etc/tensorleak.conf.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
[ "$(id -u)" -eq 0 ] || { echo "skip: not root"; exit 77; }
command -v setpriv > /dev/null || { echo "skip: no setpriv"; exit 77; }
id nobody > /dev/null 2>&1 || { echo "skip: no user nobody"; exit 77; }
libc=$(ldd "$WL/agent_bad_free" | awk '$1 == "libc.so.6" { print $3 }')
dir=$(dirname "${libc:-/nonexistent/x}")
[ -d "$dir" ] && [ -w "$dir" ] || { echo "skip: $dir not writable"; exit 77; }
name="libtensorleak-selftest-$$.so"
trap 'rm -f "$dir/$name"; rm -rf "$T"' EXIT
trap 'exit 99' INT TERM HUP
install -m 4755 "$AGENT" "$dir/$name" || exit 99
chmod 755 "$T" || exit 99
mkdir -m 700 "$T/rootonly" && mkdir -m 755 "$T/cwd" || exit 99
install -m 4755 "$WL/agent_bad_free" "$T/prog" || exit 99
# The program double-frees: the agent's message shows that it was loaded.
(cd "$T/cwd" && setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
    env LD_PRELOAD="$name" TENSORLEAK_OUTPUT="$T/rootonly/x.%p.tlt" TENSORLEAK_MODE=all \
    "$T/prog" double) > "$T/out.txt" 2> "$T/err.txt"
rc=$?
cat "$T/err.txt"
[ -z "$(ls -A "$T/rootonly")" ] || fail "a trace appeared in the root-only directory: $(ls -l "$T/rootonly")"
[ -z "$(ls -A "$T/cwd")" ] || fail "a trace appeared in the cwd: $(ls -l "$T/cwd")"
[ $rc -eq 134 ] || fail "setuid run: exit $rc, want 134"
grep -q '^tensorleak: double free of ' "$T/err.txt" || fail "the agent was not loaded"
echo ok
