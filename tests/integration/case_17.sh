#!/bin/sh
# case_17.sh - shared case 17_lru_cache_getitem (tests/cases/README.md): its must and should
# facts, checked exactly by cases_facts.py (the JSON report and check's verdicts).
. "$TL_SRCDIR/tests/integration/lib.sh"
run_case 17_lru_cache_getitem
