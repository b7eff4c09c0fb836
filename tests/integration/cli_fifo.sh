#!/bin/sh
# cli_fifo.sh - no command blocks on a FIFO: report, diff, check --trace and
# check --suppressions on a FIFO refuse it at once (one line; 3 for a trace,
# 2 for a suppression file), run returns with a FIFO in its trace directory,
# and a trace whose module record names a FIFO, or a module whose debuglink
# names one, is symbolized without opening it. Each command runs under timeout, so a hang fails (124).
# Exit 0 pass, 1 fail, 77 skip, 99 hard error.
. "$TL_SRCDIR/tests/integration/lib.sh"
MK="$WL/report_mktrace"
make_tmp
mkfifo fifo || skip "cannot make a FIFO here"
"$MK" good.tlt || hard_error "mktrace"
"$MK" --module="$TMP/fifo" modfifo.tlt || hard_error "mktrace --module"

# expect CODE WHAT CMD...: exit CODE within 20 s, one stderr line naming a FIFO
# when CODE is not 0.
expect() {
    code=$1 what=$2
    shift 2
    timeout -k 5 20 "$@" >out 2>err
    rc=$?
    [ $rc -ne 124 ] && [ $rc -ne 137 ] || fail "$what: hung on the FIFO (killed by timeout)"
    [ $rc -eq "$code" ] || { cat err >&2; fail "$what: exit $rc, expected $code"; }
    if [ "$code" -ne 0 ]; then
        [ "$(wc -l <err)" -eq 1 ] || { cat err >&2; fail "$what: expected one stderr line"; }
        grep -q 'not a regular file (a FIFO)' err || { cat err >&2; fail "$what: reason not said"; }
    fi
    echo "ok $what (exit $rc)"
}

expect 3 "report FIFO" "$TL" report fifo
expect 3 "report --format=json FIFO" "$TL" report --format=json fifo
expect 3 "diff FIFO good" "$TL" diff fifo good.tlt
expect 3 "diff good FIFO" "$TL" diff good.tlt fifo
expect 3 "check --trace=FIFO" "$TL" check --trace=fifo
expect 3 "check --baseline=FIFO" "$TL" check --trace=good.tlt --baseline=fifo \
    --max-growth-vs-baseline=0
expect 2 "check --suppressions=FIFO" "$TL" check --suppressions=fifo --trace=good.tlt

# The module's path is a FIFO: the symbolizer must not open it (an open for
# reading would wait for a writer forever); frames stay unsymbolized.
expect 0 "report of a trace whose module is a FIFO" "$TL" report modfifo.tlt
grep -q '^      at 0x401000 \[fifo\]$' out || { cat out >&2; fail "module frame not shown"; }
expect 0 "check of a trace whose module is a FIFO" "$TL" check --max-leak=2MiB --trace=modfifo.tlt

# A real ELF module whose .gnu_debuglink names a FIFO beside it: libdw must
# not look for debug files in a directory the trace chose.
if command -v objcopy >/dev/null 2>&1; then
    mkdir evil && cp "$WL/report_symtarget" evil/lib.so && objcopy --strip-debug evil/lib.so &&
        echo x >evil/lib.debug && objcopy --add-gnu-debuglink=evil/lib.debug evil/lib.so &&
        rm evil/lib.debug && mkfifo evil/lib.debug || hard_error "cannot make the debuglink module"
    "$MK" --module="$TMP/evil/lib.so" debuglink.tlt || hard_error "mktrace --module"
    expect 0 "report of a module whose debuglink names a FIFO" "$TL" report debuglink.tlt
    expect 0 "check of a module whose debuglink names a FIFO" "$TL" check --max-leak=2MiB \
        --trace=debuglink.tlt
fi

# run looks at every file of its trace directory for its traces.
mkdir traces && mkfifo traces/zz.fifo traces/tensorleak.1.tlt || hard_error "mkfifo"
expect 0 "run with FIFOs in the trace directory" "$TL" run --output="$TMP/traces/t.%p.tlt" -- true
grep -q '^tensorleak: pid ' out || { cat out err >&2; fail "run printed no report"; }
exit 0
