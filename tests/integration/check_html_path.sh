#!/bin/sh
# check_html_path.sh - `check --html=FILE` checks FILE before CMD runs, as
# --output does (tools/outfile.c): a directory that does not exist or a
# symbolic link is one line "tensorleak: FILE: cannot write: why" and exit
# 6 (README's table), and CMD never runs; a kept gate leaves an existing
# FILE as it was and makes no file; a failed one writes the page.
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp

"$TL" check --max-leak=0 --html="$TMP/no/such/dir/gate.html" -- sh -c 'touch ran' >out 2>err
rc=$?
[ $rc -eq 6 ] || { cat out err >&2; fail "a missing directory: exit $rc, want 6"; }
[ ! -e ran ] || fail "the command ran before the bad --html was said"
[ "$(wc -l <err)" -eq 1 ] && grep -qx "tensorleak: $TMP/no/such/dir/gate.html: cannot write: .*" err ||
    { cat err >&2; fail "want one line naming the file"; }
[ ! -s out ] || { cat out >&2; fail "no verdict when the page cannot be written"; }

ln -s "$TMP/elsewhere.html" link.html
"$TL" check --max-leak=0 --html=link.html -- sh -c 'touch ran' >out 2>err
rc=$?
[ $rc -eq 6 ] && [ ! -e ran ] && [ ! -e elsewhere.html ] || { cat err >&2; fail "a symbolic link: exit $rc"; }
grep -q '^tensorleak: link.html: ' err || { cat err >&2; fail "the link is not named"; }

# --trace: said before the trace is read, too
"$TL" check --max-leak=0 --html="$TMP/no/gate.html" --trace=/nonexistent.tlt >out 2>err
[ $? -eq 6 ] || { cat err >&2; fail "--trace with a bad --html: want 6"; }

# kept: an existing file as it was, no new file; failed: the page
echo old >kept.html
"$TL" check --max-leak-storage=1GiB --html=kept.html -- sh -c 'touch ran' >out 2>err ||
    { cat err >&2; fail "kept gate: $?"; }
[ -e ran ] && [ "$(cat kept.html)" = old ] || fail "a kept gate changed kept.html"
[ "$(ls -A | grep -c '^\.\?kept\.html.')" -eq 0 ] || { ls -A >&2; fail "a temporary left beside kept.html"; }
"$TL" check --leak-kinds=all --max-leak=0 --html=new.html -- "$WL/check_leaks" leak >out 2>err
rc=$?
[ $rc -eq 23 ] || { cat out err >&2; fail "failed gate: exit $rc, want 23"; }
head -c 15 new.html | grep -q '^<!DOCTYPE html>' || fail "a failed gate wrote no page"
echo "ok: --html checked before the command"
