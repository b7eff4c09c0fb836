#!/bin/sh
# docs_paths.sh - docs/architecture.md names only what exists (issue 27:
# the map must be true of the code). Every `path` it names in backticks
# under src/, tools/, tests/, docs/, include/ or bench/ must exist in the
# source tree, and every `path:function` (or `path:function()`) must name a
# function that occurs in that file as a word. Templates (a path with NAME
# in it, as in "how to add") are left out. Needs no build, no torch.
. "$TL_SRCDIR/tests/integration/lib.sh"
doc="$TL_SRCDIR/docs/architecture.md"
[ -f "$doc" ] || fail "docs/architecture.md is missing"
make_tmp
# Every backticked span, one per line (a span does not cross a line here).
grep -o '`[^`]*`' "$doc" | tr -d '`' | sort -u > spans || hard_error "cannot read $doc"
[ -s spans ] || hard_error "no backticked spans in $doc"
re_path='^(src|tools|tests|docs|include|bench)/[A-Za-z0-9_.+/-]*$'
re_func='^(src|tools|tests|docs|include|bench)/[A-Za-z0-9_.+/-]*:[A-Za-z_][A-Za-z0-9_]*(\(\))?$'
n_paths=0 n_funcs=0 bad=0
while IFS= read -r s; do
    case $s in *NAME*) continue ;; esac # a template: `tools/cmd_NAME.c`
    if printf '%s\n' "$s" | grep -Eq "$re_func"; then
        file=${s%%:*}
        fn=${s#*:}
        fn=${fn%"()"}
        n_funcs=$((n_funcs + 1))
        if [ ! -f "$TL_SRCDIR/$file" ]; then
            echo "FAIL: $s: no file $file" >&2
            bad=$((bad + 1))
        elif ! grep -qw -- "$fn" "$TL_SRCDIR/$file"; then
            echo "FAIL: $s: $file has no $fn" >&2
            bad=$((bad + 1))
        fi
    elif printf '%s\n' "$s" | grep -Eq "$re_path"; then
        n_paths=$((n_paths + 1))
        if [ ! -e "$TL_SRCDIR/$s" ]; then
            echo "FAIL: $s does not exist" >&2
            bad=$((bad + 1))
        fi
    fi
done < spans
[ "$n_paths" -ge 20 ] || hard_error "only $n_paths paths found in $doc: the extraction is broken"
[ "$bad" -eq 0 ] || fail "$bad of the $n_paths paths and $n_funcs functions docs/architecture.md names do not exist"
echo "ok: $n_paths paths and $n_funcs file:function names exist"
