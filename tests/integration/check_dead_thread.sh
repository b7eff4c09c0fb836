#!/bin/sh
# check_dead_thread.sh - a leak from a thread that has ended (issue 28 item
# 4): its only pointer was a local on the thread's stack, which glibc keeps
# in its stack cache; the scan takes no ended thread's stack as a root, so
# the 100000 B block is definitely lost at the malloc's line, as valgrind
# and LSan say.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
J="$PYTHON3 $TL_SRCDIR/tests/integration/check_json.py"
"$TL" check --max-leak=0 --format=json --output=v.json -- "$WL/leak_dead_thread" >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "leak_dead_thread: exit $rc, want 23"; }
$J v.json 'limit("max-leak")["leak_kinds"]["definite"] == {"bytes": 100000, "counted": True}' \
    'limit("max-leak")["leak_kinds"]["reachable"]["bytes"] == 0' \
    '[s["bytes"] for s in limit("max-leak")["sites"]] == [100000]' || fail "kinds: $(cat v.json)"
"$TL" check --max-leak=0 -- "$WL/leak_dead_thread" >out 2>&1
grep -q 'in worker (leak_dead_thread.c:12); definitely lost 97.7 KiB' out || fail "text: $(cat out)"
exit 0
