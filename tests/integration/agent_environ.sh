#!/bin/sh
# agent_environ.sh - `all` mode records every block of the environment's
# array. Before, the agent's putenv at its start (TENSORLEAK_EXEC_SEQ, and
# PYTHONPATH under Python) made glibc malloc that array with the guard held,
# and the program's first new variable reallocated it: a REALLOC of a
# pointer the trace never allocated (`import numpy` alone: the report's
# "1 free of pointers not allocated in the trace ignored"). Now the
# agent's variables are in the program's environment all the same, every
# FREE and REALLOC is of a block the trace has live, and the report counts
# no unknown free and no replaced block.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
: "${PYTHON3:=/usr/bin/python3}"
CLI="$TL_BUILDDIR/tensorleak"
[ -x "$CLI" ] || { echo "missing $CLI"; exit 99; }
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }

# unknown DUMP: the FREE (of a block: kinds below 5) and REALLOC records
# whose pointer is not a block live in the trace at that point, one a line.
unknown() {
    awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] } }
        $1 == "alloc" && v["kind"] != 5 { live[v["ptr"]] = 1 }
        $1 == "free" && v["kind"] < 5 { if (!(v["ptr"] in live)) print; delete live[v["ptr"]] }
        $1 == "realloc" { if (!(v["old"] in live)) print; delete live[v["old"]]; live[v["new"]] = 1 }
        { delete v }' "$1"
}

# check NAME: the trace $T/NAME.tlt has no unknown free and its report none.
check() {
    dump_of "$T/$1.tlt" >/dev/null
    u=$(unknown "$T/$1.tlt.txt")
    [ -z "$u" ] || fail "$1: free of a pointer the trace never allocated: $u"
    "$CLI" report --format=json --top=0 "$T/$1.tlt" >"$T/$1.json" || fail "$1: report"
    [ "$(json "$T/$1.json" "d['summary']['unknown_frees']")" = 0 ] ||
        fail "$1: unknown_frees $(json "$T/$1.json" "d['summary']['unknown_frees']")"
    [ "$(json "$T/$1.json" "d['summary']['replaced_blocks']")" = 0 ] ||
        fail "$1: replaced_blocks $(json "$T/$1.json" "d['summary']['replaced_blocks']")"
}

# C, the agent adding TENSORLEAK_EXEC_SEQ (a new variable) at its start
unset TENSORLEAK_EXEC_SEQ
LD_PRELOAD="$AGENT" TENSORLEAK_OUTPUT="$T/c.tlt" "$WL/agent_setenv" >"$T/c.out" ||
    fail "agent_setenv: exit $?"
# the agent's own variable is still in the program's environment
grep -q '^A=3 B=- C=4 seq=[0-9]*:1$' "$T/c.out" || fail "agent_setenv printed: $(cat "$T/c.out")"
check c
# glibc's array: its first new variable mallocs it (an ALLOC of the trace's)
[ "$(count '^(alloc|realloc) .* site=libc\.so\.6\+' "$T/c.tlt.txt")" -ge 2 ] ||
    fail "agent_setenv: environ's array not in the trace: $(grep -E '^(alloc|realloc|free)' "$T/c.tlt.txt")"

# C, TENSORLEAK_EXEC_SEQ already set (the agent replaces it in place)
TENSORLEAK_EXEC_SEQ=1:0 LD_PRELOAD="$AGENT" TENSORLEAK_OUTPUT="$T/s.tlt" "$WL/agent_setenv" >"$T/s.out" ||
    fail "agent_setenv (seq set): exit $?"
grep -q '^A=3 B=- C=4 seq=[0-9]*:1$' "$T/s.out" || fail "agent_setenv (seq set) printed: $(cat "$T/s.out")"
check s

# Python: the agent adds PYTHONPATH too; numpy's import sets a variable so
unset PYTHONPATH
TENSORLEAK_PYTHON_DIR="$TL_SRCDIR/src/python" LD_PRELOAD="$AGENT" TENSORLEAK_OUTPUT="$T/p.tlt" \
    "$PYTHON3" -c '
import os, sys
os.environ["OPENBLAS_MAIN_FREE"] = "1"
os.environ["TL_ENV_D"] = "5"
print(os.environ["OPENBLAS_MAIN_FREE"], os.environ["TL_ENV_D"], "PYTHONPATH" in os.environ)
' >"$T/p.out" || fail "python: exit $?"
[ "$(cat "$T/p.out")" = "1 5 True" ] || fail "python printed: $(cat "$T/p.out")"
check p
echo "ok"
