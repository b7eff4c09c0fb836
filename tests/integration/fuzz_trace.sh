#!/bin/sh
# fuzz_trace.sh - run the trace reader's fuzz target (tests/fuzz/fuzz_trace.c)
# for a bounded time: first every input of the kept corpus (regressions of
# crashes found before, must pass) and real traces (the agent on
# check_leaks: regions, growth, a storage with a view, an exit status, the
# default mode) once each, then fuzzing from the generated traces (sample,
# truncated, damaged, killed, hostile strings, a missing module; the first
# four compressed too) and the kept corpus. FUZZ_SECONDS (default 20) bounds the run;
# docs/fuzzing.md says how to run it longer. Skipped (77) without clang and
# libFuzzer. Exit 0 pass, 1 fail (a crash: its input is left in
# build/tests/fuzz/crashes), 77 skip, 99 hard error.
. "$TL_SRCDIR/tests/integration/lib.sh"
FUZZ="$TL_BUILDDIR/tests/fuzz/fuzz_trace"
[ -x "$FUZZ" ] || skip "no fuzz target (configure found no clang with libFuzzer)"
KEPT="$TL_SRCDIR/tests/fuzz/corpus"
CRASHES="$TL_BUILDDIR/tests/fuzz/crashes"
MK="$WL/report_mktrace"
make_tmp
mkdir seeds work
# ASan's leak check stays on; libFuzzer prints its own report on a crash.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"

# 1. The kept corpus: each input once.
set -- "$KEPT"/*
if [ -e "$1" ]; then
    "$FUZZ" -close_fd_mask=3 "$@" >kept.log 2>&1 ||
        { cat kept.log >&2; fail "an input of the kept corpus crashes again"; }
    echo "ok kept corpus: $# inputs"
fi

# 2. Seeds: generated traces (fast: their modules are not on disk) ...
"$MK" seeds/sample.tlt && "$MK" seeds/cut.tlt 4248 && "$MK" --damaged seeds/damaged.tlt &&
    "$MK" --killed seeds/killed.tlt && "$MK" --hostile seeds/hostile.tlt &&
    "$MK" --module=/nonexistent/lib.so seeds/module.tlt || hard_error "report_mktrace"
for f in sample cut damaged killed; do # compressed traces (tensorleak compress)
    cp "seeds/$f.tlt" "seeds/z-$f.tlt" && "$TL" compress --quiet "seeds/z-$f.tlt" ||
        hard_error "tensorleak compress seeds/$f.tlt"
done
# ... and real ones from the agent, whose modules (libc, the agent's own
# libraries) libdw reads on every pass: each is run once, all paths, under
# the sanitizers, but not fuzzed here (a few executions per second).
mkdir real
for mode in "grow 3" storage regions "exit 3"; do
    # shellcheck disable=SC2086
    TENSORLEAK_MODE=all "$TL" run --output="$TMP/real/all.%p.tlt" -- "$WL/check_leaks" $mode \
        >/dev/null 2>&1
done
"$TL" run --output="$TMP/real/default.%p.tlt" -- "$WL/check_leaks" leak >/dev/null 2>&1
set -- real/*.tlt
[ $# -eq 5 ] || hard_error "real traces missing: $*"
"$FUZZ" -close_fd_mask=3 "$@" >real.log 2>&1 ||
    { cat real.log >&2; fail "a real trace crashes the fuzz target"; }
echo "ok real traces: $# inputs"

# 3. Fuzz for a bounded time from the generated seeds and the kept corpus;
# new inputs go to work/, a crash to $CRASHES.
mkdir -p "$CRASHES"
set -- seeds
[ -n "$(ls -A "$KEPT")" ] && set -- seeds "$KEPT"
"$FUZZ" -close_fd_mask=3 -max_total_time="${FUZZ_SECONDS:-20}" -timeout=20 -rss_limit_mb=2048 \
    -max_len=65536 -artifact_prefix="$CRASHES/" -print_final_stats=1 work "$@" >fuzz.log 2>&1
rc=$?
grep -E '^(Done|stat::number_of_executed_units|stat::peak_rss_mb)' fuzz.log
[ $rc -eq 0 ] || { tail -n 60 fuzz.log >&2; fail "fuzz target crashed (exit $rc); input in $CRASHES"; }
exit 0
