#!/bin/sh
# src_function_lines.sh - no function of src/ or tools/ has a body over 80
# lines (STYLE.md; issue 27 found 12, tl_cmd_check at 166). A function body
# is what clang-format leaves between a "{" alone on a line and the next "}"
# at the start of a line (.clang-format puts function braces there).
. "$TL_SRCDIR/tests/integration/lib.sh"
max=80
n_funcs=0
for f in $(find "$TL_SRCDIR/src" "$TL_SRCDIR/tools" -name '*.[ch]' | sort); do
    out=$(awk -v max="$max" '
        $0 == "{" { start = NR; name = prev; next }
        /^}/ && start && !/^};/ { n++; if (NR - start - 1 > max) print NR - start - 1 " lines: " name; start = 0 }
        { prev = $0 }
        END { print "count " n + 0 }' "$f")
    n_funcs=$((n_funcs + $(echo "$out" | sed -n 's/^count //p')))
    long=$(echo "$out" | grep -v '^count ') || true
    [ -z "$long" ] || fail "${f#"$TL_SRCDIR"/}: $long"
done
[ "$n_funcs" -ge 1000 ] || hard_error "only $n_funcs functions read under src/ and tools/"
echo "ok: $n_funcs functions of at most $max lines"
