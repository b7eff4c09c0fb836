# tests/agent.mk: the agent's unit runner, workloads and preload tests.
check_PROGRAMS += tests/unit/test_agent
tests_unit_test_agent_SOURCES = tests/unit/test_agent.c
tests_unit_test_agent_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_agent_LDADD = libtlagent.la libtlcommon.la $(CHECK_LIBS) \
	$(LIBUNWIND_LIBS) $(XXHASH_LIBS) -ldl -lpthread -lm
TESTS += tests/unit/test_agent

# Workloads and tools run by the preload tests (built -g -O0: exact sites).
AGENT_WL_CFLAGS = $(AM_CFLAGS) -g -O0 -fno-omit-frame-pointer -fno-inline -fno-builtin
check_PROGRAMS += tests/workloads/tl_trace_dump
tests_workloads_tl_trace_dump_SOURCES = tests/workloads/tl_trace_dump.c
tests_workloads_tl_trace_dump_LDADD = libtlcommon.la

AGENT_WL_PROGS = tests/workloads/malloc_conformance tests/workloads/agent_forker \
	tests/workloads/agent_exec_target tests/workloads/agent_killer tests/workloads/lineage_api \
	tests/workloads/agent_churn
check_PROGRAMS += $(AGENT_WL_PROGS)
tests_workloads_malloc_conformance_SOURCES = tests/workloads/malloc_conformance.c
tests_workloads_malloc_conformance_CFLAGS = $(AGENT_WL_CFLAGS) -fno-builtin
tests_workloads_malloc_conformance_LDADD = -ldl
tests_workloads_agent_forker_SOURCES = tests/workloads/agent_forker.c
tests_workloads_agent_forker_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_agent_exec_target_SOURCES = tests/workloads/agent_exec_target.c
tests_workloads_agent_exec_target_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_agent_killer_SOURCES = tests/workloads/agent_killer.c
tests_workloads_agent_killer_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_agent_churn_SOURCES = tests/workloads/agent_churn.c
tests_workloads_agent_churn_CFLAGS = $(AGENT_WL_CFLAGS)
# The lineage API test program: include/tensorleak.h only, no link to the agent.
tests_workloads_lineage_api_SOURCES = tests/workloads/lineage_api.c
tests_workloads_lineage_api_CFLAGS = $(AGENT_WL_CFLAGS) $(XXHASH_CFLAGS)
tests_workloads_lineage_api_LDADD = $(XXHASH_LIBS) -ldl -lpthread

AGENT_TEST_SH = \
	tests/integration/agent_exports.sh \
	tests/integration/agent_conformance.sh \
	tests/integration/agent_fork.sh \
	tests/integration/agent_exec.sh \
	tests/integration/agent_kill.sh \
	tests/integration/agent_torch.sh \
	tests/integration/agent_api.sh \
	tests/integration/agent_pyframes.sh \
	tests/integration/agent_modes.sh \
	tests/integration/agent_disk_full.sh
TESTS += $(AGENT_TEST_SH)
EXTRA_DIST += $(AGENT_TEST_SH) tests/integration/agent_lib.sh tests/workloads/agent_torch.py \
	tests/workloads/agent_pyframes.py tests/workloads/agent_pyfork.py \
	tests/workloads/agent_pyframes_bench.py

# Endings: quick_exit, the execl family, fexecve and posix_spawn end a trace cleanly;
# the SIGTERM end point and the writer's reserve chunk (unit tests).
check_PROGRAMS += tests/unit/test_endings
tests_unit_test_endings_SOURCES = tests/unit/test_endings.c
tests_unit_test_endings_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_endings_LDADD = libtlagent.la libtlcommon.la $(CHECK_LIBS) \
	$(LIBUNWIND_LIBS) $(XXHASH_LIBS) -ldl -lpthread -lm
TESTS += tests/unit/test_endings
check_PROGRAMS += tests/workloads/agent_endings
tests_workloads_agent_endings_SOURCES = tests/workloads/agent_endings.c
tests_workloads_agent_endings_CFLAGS = $(AGENT_WL_CFLAGS)
TESTS += tests/integration/agent_endings.sh
EXTRA_DIST += tests/integration/agent_endings.sh
