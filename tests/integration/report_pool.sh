#!/bin/sh
# report_pool.sh - one report over a multiprocessing Pool's processes
# (issue 24): workers started by spawn and by forkserver cache a 1 MiB
# tensor per task in a module-level dict (pool_cache.py, 8 tasks over 2
# workers). `tensorleak run` reports each worker's storages at its end with
# their holders named in that worker (global _cache[i] -> Tensor), the 8
# tensors spread over the workers, and the process table names them pool
# workers.
. "$TL_SRCDIR/tests/integration/lib.sh"
need_torch
make_tmp
cp "$SRC_WL/pool_cache.py" . || hard_error "no workload"
CACHE=$(site_line pool_cache.py cache)
for how in spawn forkserver; do
    mkdir "$how" || hard_error mkdir
    "$TL" run --output="$TMP/$how/t.%p.tlt" --format=json --report="$how.json" -- "$PYTHON3" pool_cache.py "$how" >"$how.out" 2>"$how.err" ||
        { cat "$how.err" >&2; fail "$how: run exited $?"; }
    grep -qx 'sum 28' "$how.out" || fail "$how: program output: $(cat "$how.out")"
    "$PYTHON3" - "$how.json" "$CACHE" <<'PY' || fail "$how: JSON"
import json, re, sys
r = json.load(open(sys.argv[1]))
cache = int(sys.argv[2])
main = [p for p in r["processes"] if p["role"] == "main"]
workers = [p for p in r["processes"] if p["role"] == "pool worker"]
assert len(main) == 1 and main[0]["end"]["storage_count"] == 0, [(p["role"], p["end"]["storage_count"]) for p in r["processes"]]
assert 1 <= len(workers) <= 2, [p["role"] for p in r["processes"]]
keys = []
for w in workers:
    for s in w["end"]["storages"]:
        assert s["bytes"] == 1 << 20 and s["held_by"] == "tensor", (s["bytes"], s["held_by"])
        m = re.fullmatch(r"global _cache\[(\d)\] -> Tensor", s["held_path"] or "")
        assert m, s["held_path"]
        keys.append(int(m[1]))
        assert any(f["kind"] == "python" and f["line"] == cache and f["file"].endswith("pool_cache.py")
                   for f in s["stack"] or []), s["stack"]
# every task's tensor, each in the worker that ran it, each once
assert sorted(keys) == list(range(8)), keys
print("ok:", [(w["pid"], w["end"]["storage_count"]) for w in workers])
PY
    "$TL" report "$TMP/$how" >"$how.txt" || fail "$how: report DIR exited $?"
    grep -qE '^  [0-9]+ +[0-9]+ +pool worker ' "$how.txt" || fail "$how: process table: $(sed -n '/^Processes/,/^$/p' "$how.txt")"
    grep -qE "^      held: global _cache\[[0-7]\] -> Tensor" "$how.txt" || fail "$how: text holders: $(grep 'held:' "$how.txt")"
done
exit 0
