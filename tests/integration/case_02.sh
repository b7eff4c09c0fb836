#!/bin/sh
# case_02.sh - shared case 02_numpy_slice_pins_base (tests/cases/README.md): the report's
# end-point storages, views, pinned bytes, copies and peak match the ground truth.
. "$TL_SRCDIR/tests/integration/lib.sh"
run_case 02_numpy_slice_pins_base
