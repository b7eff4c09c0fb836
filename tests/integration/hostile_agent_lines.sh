#!/bin/sh
# hostile_agent_lines.sh - what the agent itself writes on the program's
# stderr echoes names with their control bytes escaped as \xNN: the trace
# path of a TENSORLEAK_OUTPUT that cannot be created, and the module of a
# program whose file name carries a terminal escape, in the one line of a
# double free (which still aborts, exit 134).
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
E=$(printf 'x\033]0;pwned\007\033[2J')
# clean FILE WHAT: no control byte but the final newline; the escaped name there.
clean() {
    tr -d '\n' < "$1" | LC_ALL=C grep -q '[[:cntrl:]]' && {
        od -c "$1" | head -5
        fail "$2: raw control bytes on stderr"
    }
    grep -qF 'x\x1b]0;pwned\x07\x1b[2J' "$1" || { cat "$1"; fail "$2: no escaped name"; }
}
TENSORLEAK_OUTPUT="$T/$E/t.%p.tlt" LD_PRELOAD="$AGENT" /bin/true 2> e1.txt ||
    fail "the program failed under an uncreatable TENSORLEAK_OUTPUT"
cat e1.txt
[ "$(wc -l < e1.txt)" -eq 1 ] || fail "not one note for an uncreatable trace"
clean e1.txt "cannot create trace"
cp "$WL/agent_bad_free" "$E" || exit 99
for m in default all disabled; do
    if [ $m = disabled ]; then
        TENSORLEAK_DISABLE=1 LD_PRELOAD="$AGENT" timeout 20 "./$E" double > o.txt 2> e.txt
    else
        TENSORLEAK_MODE=$m TENSORLEAK_OUTPUT="$T/t.%p.tlt" LD_PRELOAD="$AGENT" \
            timeout 20 "./$E" double > o.txt 2> e.txt
    fi
    rc=$?
    cat e.txt
    [ $rc -eq 134 ] || fail "$m: exit $rc, not 134 (SIGABRT)"
    [ "$(wc -l < e.txt)" -eq 1 ] || fail "$m: not one line on stderr"
    grep -q '^tensorleak: double free of ' e.txt || fail "$m: message"
    clean e.txt "$m: double free"
done
echo ok
