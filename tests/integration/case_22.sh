#!/bin/sh
# case_22.sh - shared case 22_thread_tensors_not_a_leak (tests/cases/README.md): its must and should
# facts, checked exactly by cases_facts.py (the JSON report and check's verdicts).
. "$TL_SRCDIR/tests/integration/lib.sh"
run_case 22_thread_tensors_not_a_leak
