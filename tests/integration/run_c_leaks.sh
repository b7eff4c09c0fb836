#!/bin/sh
# run_c_leaks.sh - `tensorleak run` on a C program that leaks from several
# sites in several threads: exact bytes, blocks, function and line per site.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp

# Exact small-block leaks: `all` mode (the default samples them).
TENSORLEAK_MODE=all "$TL" run --output="$TMP/t.%p.tlt" -- "$WL/leaky_threads" >run.out 2>run.err
rc=$?
[ $rc -eq 0 ] || { cat run.err >&2; fail "run exited $rc"; }
grep -q '^leaky_threads: kept 11 blocks$' run.out || fail "program output missing"
grep -q 'Leaks' run.out || fail "text report missing from run output"
set -- "$TMP"/t.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected exactly one trace, got: $*"
[ "$(stat -c %a "$1")" = 600 ] || fail "trace mode is $(stat -c %a "$1"), not 600"
"$TL" report --format=json --top=0 "$1" >report.json || fail "report exited $?"

cat >checks.py <<'PY'
s = report["summary"]
expected = {  # site: (function, blocks, bytes)
    "worker_malloc": ("worker_malloc", 3, 3000),
    "worker_calloc": ("worker_calloc", 2, 8192),
    "both_threads": ("both_threads", 4, 3108),
    "grow_realloc": ("grow", 1, 5000),
    "aligned_buf": ("main", 1, 123456),
}
total = 0
for name, (fn, blocks, nbytes) in expected.items():
    found = sites_at("leaks", fn, line(name), innermost_only=True)
    check(len(found) == 1, f"{name}: {len(found)} leak sites at {fn}:{line(name)}, want 1")
    site = found[0]
    check(site["blocks"] == blocks, f"{name}: {site['blocks']} blocks, want {blocks}")
    check(site["bytes"] == nbytes, f"{name}: {site['bytes']} bytes, want {nbytes}")
    check(site["storage"] is False, f"{name}: marked as storage")
    f0 = site["stack"][0]
    check(f0["file"].endswith("leaky_threads.c"), f"{name}: file {f0['file']}")
    check(f0["module"].endswith("leaky_threads"), f"{name}: module {f0['module']}")
    total += nbytes
# nothing else in the workload's own functions leaks (the freed 64 B and 1 MiB)
ours = {"worker_malloc", "worker_calloc", "both_threads", "grow", "main"}
for site in report["leaks"]:
    fr = site["stack"][0] if site["stack"] else {}
    if fr.get("function") in ours:
        check(any(fr.get("line") == line(n) for n in expected), f"unexpected leak at {fr}")
check(s["leaked_bytes"] >= total, f"leaked_bytes {s['leaked_bytes']} < {total}")
check(s["storages"] == 0 and s["leaked_storage_bytes"] == 0, "a C program has no storages")
check(s["peak_bytes"] >= total + (1 << 20), f"peak {s['peak_bytes']} misses the 1 MiB block")
check(s["dropped_events"] == 0, "dropped events")
check(report["process"]["exit_status"] == 0, "exit status")
check(report["process"]["argv"][0].endswith("leaky_threads"), "argv")
PY
"$PYTHON3" "$TLCHECK" report.json "$SRC_WL/leaky_threads.c" checks.py || exit 1
