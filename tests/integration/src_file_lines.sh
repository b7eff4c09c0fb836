#!/bin/sh
# src_file_lines.sh - no C file of src/ or tools/ passes the ~600 lines of
# STYLE.md's "one file, one concern" (issue 12: hooks.c had 898 lines,
# model.c 621; tools/launch.c had 661 before the launcher's rules moved to
# tools/project.c).
# Generated sources live in the build tree and are not read.
. "$TL_SRCDIR/tests/integration/lib.sh"
max=600
n_files=0
for f in $(find "$TL_SRCDIR/src" "$TL_SRCDIR/tools" -name '*.[ch]' | sort); do
    n_files=$((n_files + 1))
    n=$(wc -l < "$f")
    [ "$n" -le "$max" ] || fail "${f#"$TL_SRCDIR"/} has $n lines (more than $max)"
done
[ "$n_files" -ge 50 ] || hard_error "only $n_files C files under $TL_SRCDIR/src and tools"
echo "ok: $n_files files of at most $max lines"
