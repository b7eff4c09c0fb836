#!/bin/sh
# case_14.sh - shared case 14_ctx_output_cycle (tests/cases/README.md): its must and should
# facts, checked exactly by cases_facts.py (the JSON report and check's verdicts).
. "$TL_SRCDIR/tests/integration/lib.sh"
run_case 14_ctx_output_cycle
