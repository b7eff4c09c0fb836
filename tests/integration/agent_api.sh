#!/bin/sh
# agent_api.sh - the lineage API (include/tensorleak.h, tensorleak_agent_api):
# lineage_api works without the agent (every call a no-op, exit 0) and under
# it writes each record with exact values; the Python package sees the agent
# (tensorleak.active()) and `with tensorleak.region("x"):` writes
# REGION_BEGIN/END. Python part skips without /usr/bin/python3.
. "$TL_SRCDIR/tests/integration/agent_lib.sh"
cd "$T" || exit 99

# Without the agent: nothing to look up, nothing done.
"$WL/lineage_api" > plain.txt || fail "lineage_api without the agent exited $?"
grep -qx 'api none' plain.txt || fail "table found without the agent"
grep -qx 'mark 0' plain.txt || fail "snapshot id without the agent"
grep -qx 'trace (none)' plain.txt || fail "trace path without the agent"

TENSORLEAK_FINGERPRINT_MIN=8KiB TENSORLEAK_OUTPUT="$T/a.%p.tlt" LD_PRELOAD="$AGENT" \
    "$WL/lineage_api" > out.txt || fail "lineage_api under the agent exited $?"
cat out.txt
grep -qx 'api v1' out.txt || fail "no table under the agent"
grep -qE "^trace $T/a\.[0-9]+\.tlt\$" out.txt || fail "trace_path"
pool=$(sed -n 's/^pool //p' out.txt); dst=$(sed -n 's/^dst //p' out.txt)
hash=$(sed -n 's/^hash //p' out.txt)
grep -qx 'mark 2' out.txt || fail "snapshot ids count from 1 (checkpoint=1, manual=2)"
set -- "$T"/a.*.tlt
[ $# -eq 1 ] && [ -f "$1" ] || fail "expected one trace: $*"
dump_of "$1" > d.txt
grep -E '^(storage_|view_|copy|tag|region_|mark|snapshot_|fingerprint|origin)' d.txt > l.txt
cut -d' ' -f2,3 --complement l.txt > got.txt
long=$(printf '%0256d' 0 | tr 0 x)
site='site=lineage_api\+0x[0-9a-f]+'
# exact: every record, in order (the thread's tag is in its own chunk: last
# here, as the dump lists chunks in the order they were handed out)
sed -E "s/ stack=[0-9]+//; s/ $site\$//" got.txt > got2.txt
cat > want.txt <<EOW
storage_register ptr=$pool size=8192 origin=my_pool
view_begin view=0x1234 storage=$pool offset=64 extent=256 bytes=512 op=slice
copy dst=$dst src=$pool bytes=4096 op=clone
copy dst=$dst src=$pool bytes=4096 op=
tag storage=$pool tag=weights
tag storage=$pool tag=$long
region_begin name=step
region_end name=step
region_begin name=
region_end name=
mark id=1 name=checkpoint
origin storage=$dst op=my_op
mark id=2 name=manual
snapshot_hold mark=2 storage=$pool held_by=2 object=0x55
fingerprint mark=2 storage=$pool size=8192 hash=$hash
snapshot_hold mark=2 storage=$dst held_by=1 object=0x0
snapshot_hold mark=2 storage=$dst held_by=0 object=0x0
snapshot_view mark=2 storage=$pool offset=64 extent=256 bytes=512 object=0x66 op=slice
view_end view=0x1234
storage_unregister ptr=$pool
tag storage=$pool tag=from_thread
EOW
diff want.txt got2.txt || fail "lineage records differ (want vs got above)"
# The register and view records carry the caller's stack: frame 0 in main.
[ "$(count "^storage_register .* stack=[1-9][0-9]* .*$site\$" got.txt)" -eq 1 ] || fail "register stack"
[ "$(count "^view_begin .* stack=[1-9][0-9]* .*$site\$" got.txt)" -eq 1 ] || fail "view stack"
grep -qE '^end .* dropped=0$' d.txt || fail "END counters"

# TENSORLEAK_DISABLE=1: no table, no trace.
TENSORLEAK_DISABLE=1 TENSORLEAK_OUTPUT="$T/off.%p.tlt" LD_PRELOAD="$AGENT" "$WL/lineage_api" > off.txt \
    || fail "disabled run exited $?"
grep -qx 'api none' off.txt || fail "table served while disabled"

# Python: the package finds the agent and writes regions.
PY=${PYTHON3:-/usr/bin/python3}
if "$PY" -c 'import ctypes' > /dev/null 2>&1; then
    TENSORLEAK_PYTHON_DIR="$TL_SRCDIR/src/python" TENSORLEAK_OUTPUT="$T/p.%p.tlt" LD_PRELOAD="$AGENT" \
        "$PY" -c 'import tensorleak
print("active", tensorleak.active())
with tensorleak.region("x"):
    pass' > py.txt || fail "python exited $?"
    grep -qx 'active True' py.txt || fail "tensorleak.active() under the agent"
    set -- "$T"/p.*.tlt
    dump_of "$1" > p.txt
    [ "$(count '^region_begin .* name=x$' p.txt)" -eq 1 ] || fail "REGION_BEGIN x"
    [ "$(count '^region_end .* name=x$' p.txt)" -eq 1 ] || fail "REGION_END x"
    "$PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); import tensorleak
print("active", tensorleak.active())' "$TL_SRCDIR/src/python" > py0.txt || fail "python without agent"
    grep -qx 'active False' py0.txt || fail "tensorleak.active() without the agent"
fi
echo ok
