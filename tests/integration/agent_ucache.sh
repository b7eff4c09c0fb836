#!/bin/sh
# agent_ucache.sh - `all` mode's stacks stay exact with the unwind cache
# (src/agent/stack.c): a program built -O2 without frame pointers (so the
# cache answers its stacks) calls keep() from path_a and path_b in turns,
# under the same cache key, at depths 1-3, in two threads. Every leaked
# block is under its own path's line with its own size: 24 B blocks under
# path_a, 40 B under path_b, 3 x N of each per thread, 3 depths each.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99
N=300
LD_PRELOAD="$AGENT" TENSORLEAK_OUTPUT="$T/u.%p.tlt" "$WL/ucache_paths" $N >out.txt 2>&1
rc=$?
[ $rc -eq 0 ] || { cat out.txt; fail "exit $rc"; }
[ -s out.txt ] && { cat out.txt; fail "the program printed something"; }
set -- "$T"/u.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected one trace, got: $*"
"$TL_BUILDDIR/tensorleak" report --format=json --top=0 "$1" >r.json || fail "report exited $?"
src="$TL_SRCDIR/tests/workloads/ucache_paths.c"
la=$(grep -n 'SITE:path_a' "$src" | cut -d: -f1)
lb=$(grep -n 'SITE:path_b' "$src" | cut -d: -f1)
"${PYTHON3:-/usr/bin/python3}" - r.json "$la" "$lb" "$N" <<'PY' || fail "leaks by path"
import json, sys
report, la, lb, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
want = {"path_a": (la, 24), "path_b": (lb, 40)}
blocks = {"path_a": 0, "path_b": 0}
depths = {"path_a": set(), "path_b": set()}
for leak in json.load(open(report))["leaks"]:
    # A site a default suppression matches has no stack (report-schema.md).
    st = [f for f in leak["stack"] or [] if f.get("function") in ("keep", "path_a", "path_b")]
    if not st:
        continue
    names = [f["function"] for f in st]
    path = names[1] if len(names) > 1 else None
    ok = names[0] == "keep" and path in want and set(names[1:]) == {path}
    line, size = want.get(path, (0, 0))
    ok = ok and st[1]["line"] == line and leak["bytes"] == size * leak["blocks"]
    if not ok:
        print("wrong stack or size:", names, [f.get("line") for f in st], leak["bytes"],
              leak["blocks"])
        sys.exit(1)
    blocks[path] += leak["blocks"]
    depths[path].add(len(names) - 1)
for p in want:
    if blocks[p] != 2 * 3 * n or depths[p] != {1, 2, 3}:
        print(p, "blocks", blocks[p], "want", 6 * n, "depths", sorted(depths[p]))
        sys.exit(1)
PY
echo ok
