#!/bin/sh
# case_09.sh - shared case 09_repeat_vs_expand (tests/cases/README.md): the report's
# end-point storages, views, pinned bytes, copies and peak match the ground truth.
. "$TL_SRCDIR/tests/integration/lib.sh"
run_case 09_repeat_vs_expand
