#!/bin/sh
# case_01.sh - shared case 01_torch_slice_pins_base (tests/cases/README.md): the report's
# end-point storages, views, pinned bytes, copies and peak match the ground truth.
. "$TL_SRCDIR/tests/integration/lib.sh"
run_case 01_torch_slice_pins_base
