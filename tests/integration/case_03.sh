#!/bin/sh
# case_03.sh - shared case 03_loss_history_pins_graph (tests/cases/README.md): the report's
# end-point storages, views, pinned bytes, copies and peak match the ground truth.
. "$TL_SRCDIR/tests/integration/lib.sh"
run_case 03_loss_history_pins_graph
