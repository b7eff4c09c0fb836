#!/bin/sh
# case_16.sh - shared case 16_exception_keeps_frame (tests/cases/README.md): its must and should
# facts, checked exactly by cases_facts.py (the JSON report and check's verdicts).
. "$TL_SRCDIR/tests/integration/lib.sh"
run_case 16_exception_keeps_frame
