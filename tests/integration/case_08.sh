#!/bin/sh
# case_08.sh - shared case 08_tensor_from_ndarray_copies (tests/cases/README.md): the report's
# end-point storages, views, pinned bytes, copies and peak match the ground truth.
. "$TL_SRCDIR/tests/integration/lib.sh"
run_case 08_tensor_from_ndarray_copies
