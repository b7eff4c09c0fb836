# tests/agent.mk: the agent's unit runner, workloads and preload tests.
check_PROGRAMS += tests/unit/test_agent
tests_unit_test_agent_SOURCES = tests/unit/test_agent.c
tests_unit_test_agent_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_agent_LDADD = libtlagent.la libtlcommon.la $(CHECK_LIBS) \
	$(LIBUNWIND_LIBS) $(XXHASH_LIBS) -ldl -lpthread
TESTS += tests/unit/test_agent

# Workloads and tools run by the preload tests (built -g -O0: exact sites).
AGENT_WL_CFLAGS = $(AM_CFLAGS) -g -O0 -fno-omit-frame-pointer -fno-inline
check_PROGRAMS += tests/workloads/tl_trace_dump
tests_workloads_tl_trace_dump_SOURCES = tests/workloads/tl_trace_dump.c
tests_workloads_tl_trace_dump_LDADD = libtlcommon.la
