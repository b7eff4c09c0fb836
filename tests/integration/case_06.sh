#!/bin/sh
# case_06.sh - shared case 06_split_chunk_pins_batch (tests/cases/README.md): the report's
# end-point storages, views, pinned bytes, copies and peak match the ground truth.
. "$TL_SRCDIR/tests/integration/lib.sh"
run_case 06_split_chunk_pins_batch
