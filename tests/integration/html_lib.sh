# html_lib.sh - helpers of the HTML report tests (sourced after lib.sh).

# need_chromium: $CHROMIUM, Debian's chromium (tools/install-deps.sh installs it), else skip.
need_chromium() {
    CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
    [ -n "$CHROMIUM" ] && [ -x "$CHROMIUM" ] || skip "no chromium (apt-get install chromium)"
}

# html_check TRACE NAME [--hostile]: render TRACE as JSON, folded peak
# stacks and HTML, open the page in headless Chromium and compare
# (html_browser.py); screenshots go to $HTML_SHOTS/NAME*.png for the log.
HTML_SHOTS="$TL_BUILDDIR/tests/integration/html-screenshots"
html_check() {
    trace=$1 name=$2
    shift 2
    mkdir -p "$HTML_SHOTS" || hard_error "mkdir $HTML_SHOTS"
    "$TL" report --format=json "$trace" >"$name.json" || fail "$name: json report exited $?"
    "$TL" report --format=folded-peak "$trace" >"$name.folded" || fail "$name: folded exited $?"
    "$TL" report --format=html --output="$name.html" "$trace" || fail "$name: html report exited $?"
    "$PYTHON3" "$TL_SRCDIR/tests/integration/html_browser.py" "$CHROMIUM" "$name.html" \
        "$name.json" "$name.folded" "$HTML_SHOTS/$name.png" "$@"
    rc=$?
    [ $rc -eq 0 ] || { [ $rc -eq 99 ] && hard_error "$name: browser"; fail "$name: page differs from the JSON report"; }
}

# html_run_check PAGE.html REPORT.json PID NAME: the HTML page of a run of
# several processes against its JSON report, PID picked (html_run.py);
# a note, not a skip, where there is no chromium (the caller checks more).
html_run_check() {
    CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
    if [ -z "$CHROMIUM" ]; then
        echo "note: no chromium: $4's HTML page not opened"
        return 0
    fi
    mkdir -p "$HTML_SHOTS" || hard_error "mkdir $HTML_SHOTS"
    "$PYTHON3" "$TL_SRCDIR/tests/integration/html_run.py" "$CHROMIUM" "$1" "$2" "$3" "$HTML_SHOTS/$4.png"
    rc=$?
    [ $rc -eq 0 ] || { [ $rc -eq 99 ] && hard_error "$4: browser"; fail "$4: the run's page differs from its JSON report"; }
}
