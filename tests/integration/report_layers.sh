#!/bin/sh
# report_layers.sh - the report library (src/report) is a library: it
# includes nothing of the CLI (tools/: exit codes, messages) and never
# writes to stdout or stderr itself; it returns a tl_status_t and its lines
# (report/status.h) for the CLI to print (issue 12: it included
# tools/exit_codes.h and printed its own messages).
. "$TL_SRCDIR/tests/integration/lib.sh"
make_tmp
objs=$(find "$TL_BUILDDIR/src/report" -name 'libtlreport_la-*.o' | sort)
[ -n "$objs" ] || hard_error "no libtlreport objects under $TL_BUILDDIR/src/report"
n=0
for o in $objs; do
    n=$((n + 1))
    nm -u "$o" | awk '{print $2}' > undef
    for sym in stderr stdout perror; do
        grep -qx "$sym" undef && fail "${o##*/} uses $sym: the library must not print"
    done
done
# The stages call only downstream: read/ nothing of analyze/, render/ or
# cmd/; analyze/ nothing of render/ or cmd/ (lineage.c used render's size
# text, aggregate.c wrote the renderers' mode lines, peek.c included cmd/);
# render/ nothing of cmd/ (check's renderers included cmd/check_impl.h and
# called check.c's tl_chk_where); check/ (`check` as one module: its model,
# evaluation and verdicts) sits on top, and nothing below calls it (its
# model lived in render/ and embedded the pipeline's result).
stage() { n=$(find "$TL_BUILDDIR/src/report/$1" -name 'libtlreport_la-*.o' | sort); [ -n "$n" ] || hard_error "no objects in $1/"; echo "$n"; }
defs() { for o in $(stage "$1"); do nm --defined-only "$o" | awk 'NF == 3 && $2 ~ /[TDBR]/ {print $3}'; done | sort -u; }
for pair in "read analyze" "read render" "read cmd" "read check" "analyze render" "analyze cmd" \
    "analyze check" "render cmd" "render check" "cmd check"; do
    set -- $pair
    defs "$2" > "def.$2"
    for o in $(stage "$1"); do
        nm -u "$o" | awk '{print $2}' | sort -u | comm -12 - "def.$2" > bad
        [ -s bad ] && fail "$1/${o##*/libtlreport_la-} calls $2/: $(tr '\n' ' ' < bad)"
    done
    if grep -ln "#include \"report/$2/" "$TL_SRCDIR/src/report/$1"/*.[ch] > inc; then
        fail "$1/ includes $2/: $(tr '\n' ' ' < inc)"
    fi
done
grep -q '^tl_status_t tl_report_file' "$TL_SRCDIR/src/report/cmd/report.h" ||
    fail "tl_report_file does not return a tl_status_t"
# The CLI knows check by its one header: the model (verdict.h) is the
# module's own.
if grep -n '#include "report/check/' "$TL_SRCDIR"/tools/*.[ch] | grep -v 'report/check/check\.h"' > inc; then
    cat inc >&2
    fail "tools/ includes check/'s internals"
fi
if grep -rn '#include "tools/' "$TL_SRCDIR/src/report" > inc; then
    cat inc >&2
    fail "src/report includes the CLI's headers"
fi
# No two files of the library call each other, directly or round a loop
# (issue 27: stream.c and zchunk.c, render_json.c and render_json_end.c
# did). A node: a file, named by its stage and its object; an edge A -> B:
# an undefined symbol of A's object that B's defines.
name() {
    d=${1%/*}
    d=${d%/.libs}
    d=${d#"$TL_BUILDDIR"/src/report}
    d=${d#/}
    f=${1##*/libtlreport_la-}
    echo "${d:+$d:}${f%.o}" | tr / _
}
# shellcheck disable=SC2086
call_edges name $objs
grep -q '^cmd:report pipeline$' edges || fail "no edge cmd:report -> pipeline: the objects were not read ($(wc -l < edges) edges)"
sort -u edges > uedges
if ! tsort uedges > order 2> loop; then
    fail "a call cycle between the library's files: $(tr '\n' ' ' < loop)"
fi
echo "ok: $n objects, none prints, no tools/ header, $(wc -l < uedges) call edges without a cycle"
