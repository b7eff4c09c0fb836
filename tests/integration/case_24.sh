#!/bin/sh
# case_24.sh - shared case 24_cat_doubles_peak (tests/cases/README.md): its must and should
# facts, checked exactly by cases_facts.py (the JSON report and check's verdicts).
. "$TL_SRCDIR/tests/integration/lib.sh"
run_case 24_cat_doubles_peak
