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
	tests/workloads/agent_churn tests/workloads/live_writer tests/workloads/agent_setenv
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
tests_workloads_live_writer_SOURCES = tests/workloads/live_writer.c
tests_workloads_live_writer_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_agent_setenv_SOURCES = tests/workloads/agent_setenv.c
tests_workloads_agent_setenv_CFLAGS = $(AGENT_WL_CFLAGS)
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
	tests/integration/agent_new_lines.sh \
	tests/integration/agent_view_object.sh \
	tests/integration/agent_api.sh \
	tests/integration/agent_pyframes.sh \
	tests/integration/agent_modes.sh \
	tests/integration/agent_environ.sh \
	tests/integration/agent_disk_full.sh \
	tests/integration/report_live.sh
TESTS += $(AGENT_TEST_SH)
EXTRA_DIST += $(AGENT_TEST_SH) tests/integration/agent_lib.sh tests/workloads/agent_torch.py \
	tests/workloads/agent_pyframes.py tests/workloads/agent_pyfork.py \
	tests/workloads/agent_pyframes_bench.py tests/workloads/new_lines.py \
	tests/workloads/view_object.py

# Python frames under each CPython 3.10-3.13 (pyenv's interpreters and headers),
# and interpreters the agent does not read (real old ones and fake C programs).
AM_TESTS_ENVIRONMENT += TL_CC='$(CC)'; export TL_CC;
PYFRAMES_TEST_SH = \
	tests/integration/pyframes_layout.sh \
	tests/integration/pyframes_cpython310.sh \
	tests/integration/pyframes_cpython311.sh \
	tests/integration/pyframes_cpython312.sh \
	tests/integration/pyframes_cpython313.sh \
	tests/integration/pyframes_unsupported.sh \
	tests/integration/pyframes_embed.sh
TESTS += $(PYFRAMES_TEST_SH)
EXTRA_DIST += $(PYFRAMES_TEST_SH) tests/integration/pyframes_cpython.sh \
	tests/workloads/pyframes_layout_check.c tests/workloads/pyframes_daemon.py
PYFAKE_PROGS = tests/workloads/pyfake_314 tests/workloads/pyfake_310b2 \
	tests/workloads/pyfake_312d tests/workloads/pyfake_313t tests/workloads/pyfake_313u
check_PROGRAMS += $(PYFAKE_PROGS) tests/workloads/pyframes_embed
tests_workloads_pyframes_embed_SOURCES = tests/workloads/pyframes_embed.c
tests_workloads_pyframes_embed_LDADD = -ldl
PYFAKE_EXPORT = -Wl,--export-dynamic
tests_workloads_pyfake_314_SOURCES = tests/workloads/pyframes_fake_cpython.c
tests_workloads_pyfake_314_CPPFLAGS = $(AM_CPPFLAGS) -DFAKE_HEX=0x030e00f0 -DFAKE_VERSION='"3.14.0"'
tests_workloads_pyfake_314_LDFLAGS = $(PYFAKE_EXPORT)
tests_workloads_pyfake_310b2_SOURCES = tests/workloads/pyframes_fake_cpython.c
tests_workloads_pyfake_310b2_CPPFLAGS = $(AM_CPPFLAGS) -DFAKE_VERSION='"3.10.0b2"'
tests_workloads_pyfake_310b2_LDFLAGS = $(PYFAKE_EXPORT)
tests_workloads_pyfake_312d_SOURCES = tests/workloads/pyframes_fake_cpython.c
tests_workloads_pyfake_312d_CPPFLAGS = $(AM_CPPFLAGS) -DFAKE_HEX=0x030c01f0 -DFAKE_VERSION='"3.12.1"' \
	-DFAKE_DEBUG -DFAKE_TYPE_OK
tests_workloads_pyfake_312d_LDFLAGS = $(PYFAKE_EXPORT)
tests_workloads_pyfake_313t_SOURCES = tests/workloads/pyframes_fake_cpython.c
tests_workloads_pyfake_313t_CPPFLAGS = $(AM_CPPFLAGS) -DFAKE_HEX=0x030d00f0 -DFAKE_VERSION='"3.13.0"' \
	-DFAKE_FREE_THREADED
tests_workloads_pyfake_313t_LDFLAGS = $(PYFAKE_EXPORT)
tests_workloads_pyfake_313u_SOURCES = tests/workloads/pyframes_fake_cpython.c
tests_workloads_pyfake_313u_CPPFLAGS = $(AM_CPPFLAGS) -DFAKE_HEX=0x030d00f0 -DFAKE_VERSION='"3.13.0"' \
	-DFAKE_TYPE_OK
tests_workloads_pyfake_313u_LDFLAGS = $(PYFAKE_EXPORT)

# Issue 9: descriptors, file size limits, short threads, resident memory.
AGENT_RELIABILITY_PROGS = tests/workloads/agent_fds tests/workloads/agent_fsize \
	tests/workloads/agent_threads tests/workloads/agent_rss tests/workloads/free_rss \
	tests/workloads/as_limit
check_PROGRAMS += $(AGENT_RELIABILITY_PROGS)
tests_workloads_agent_fds_SOURCES = tests/workloads/agent_fds.c
tests_workloads_agent_fds_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_agent_fsize_SOURCES = tests/workloads/agent_fsize.c
tests_workloads_agent_fsize_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_agent_threads_SOURCES = tests/workloads/agent_threads.c
tests_workloads_agent_threads_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_agent_threads_LDADD = -lpthread
tests_workloads_agent_rss_SOURCES = tests/workloads/agent_rss.c
tests_workloads_agent_rss_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_free_rss_SOURCES = tests/workloads/free_rss.c
tests_workloads_free_rss_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_as_limit_SOURCES = tests/workloads/as_limit.c
tests_workloads_as_limit_CFLAGS = $(AGENT_WL_CFLAGS)
AGENT_RELIABILITY_SH = tests/integration/agent_fds.sh tests/integration/agent_fsize.sh \
	tests/integration/agent_threads.sh tests/integration/agent_rss.sh \
	tests/integration/agent_free_rss.sh tests/integration/agent_as_limit.sh
TESTS += $(AGENT_RELIABILITY_SH)
EXTRA_DIST += $(AGENT_RELIABILITY_SH)

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

# Reliability (issue 9): small thread stacks.
check_PROGRAMS += tests/workloads/agent_small_stacks
tests_workloads_agent_small_stacks_SOURCES = tests/workloads/agent_small_stacks.c
tests_workloads_agent_small_stacks_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_agent_small_stacks_LDADD = -lpthread
TESTS += tests/integration/agent_small_stacks.sh
EXTRA_DIST += tests/integration/agent_small_stacks.sh

# Reliability (issue 9): double and invalid frees abort like glibc's.
check_PROGRAMS += tests/workloads/agent_bad_free
tests_workloads_agent_bad_free_SOURCES = tests/workloads/agent_bad_free.c
tests_workloads_agent_bad_free_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_agent_bad_free_LDADD = -lpthread
TESTS += tests/integration/agent_bad_free.sh
EXTRA_DIST += tests/integration/agent_bad_free.sh
# Reliability (issue 9): secure execution ignores TENSORLEAK_* (root only, else skipped).
TESTS += tests/integration/agent_secure.sh
EXTRA_DIST += tests/integration/agent_secure.sh

# Reliability (issue 9): threads x fork x exec x dlopen, a few seconds.
check_PROGRAMS += tests/workloads/agent_stress
tests_workloads_agent_stress_SOURCES = tests/workloads/agent_stress.c
tests_workloads_agent_stress_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_agent_stress_LDADD = -ldl -lpthread
TESTS += tests/integration/agent_stress.sh
EXTRA_DIST += tests/integration/agent_stress.sh

# Report core (issue 12): the live block table and aggregate mode's checkpoints.
check_PROGRAMS += tests/unit/test_live
tests_unit_test_live_SOURCES = tests/unit/test_live.c
tests_unit_test_live_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_live_LDADD = libtlagent.la libtlcommon.la $(CHECK_LIBS) \
	$(LIBUNWIND_LIBS) $(XXHASH_LIBS) -ldl -lpthread -lm
TESTS += tests/unit/test_live
TESTS += tests/integration/agent_layers.sh
EXTRA_DIST += tests/integration/agent_layers.sh
# Report core (issue 12): a fork child's report point ids start at 1 (api.c's own fork handler).
check_PROGRAMS += tests/workloads/api_fork
tests_workloads_api_fork_SOURCES = tests/workloads/api_fork.c
tests_workloads_api_fork_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_api_fork_LDADD = -ldl
TESTS += tests/integration/agent_api_fork.sh
EXTRA_DIST += tests/integration/agent_api_fork.sh

# Hostile run: errno after successful allocations under an address space limit.
check_PROGRAMS += tests/workloads/hostile_errno
tests_workloads_hostile_errno_SOURCES = tests/workloads/hostile_errno.c
tests_workloads_hostile_errno_CFLAGS = $(AGENT_WL_CFLAGS)
TESTS += tests/integration/hostile_errno.sh
EXTRA_DIST += tests/integration/hostile_errno.sh

# Hostile run: the agent's own stderr lines escape the names they echo.
TESTS += tests/integration/hostile_agent_lines.sh
EXTRA_DIST += tests/integration/hostile_agent_lines.sh

# SIGTERM end point on a small thread stack: the program still dies of SIGTERM.
check_PROGRAMS += tests/workloads/agent_sigterm_stack
tests_workloads_agent_sigterm_stack_SOURCES = tests/workloads/agent_sigterm_stack.c
tests_workloads_agent_sigterm_stack_CFLAGS = $(AGENT_WL_CFLAGS)
tests_workloads_agent_sigterm_stack_LDADD = -lpthread
TESTS += tests/integration/agent_sigterm_stack.sh
EXTRA_DIST += tests/integration/agent_sigterm_stack.sh

# Leak kinds: memcheck's classification rules on synthetic blocks and roots
check_PROGRAMS += tests/unit/test_leakscan
tests_unit_test_leakscan_SOURCES = tests/unit/test_leakscan.c
tests_unit_test_leakscan_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_leakscan_LDADD = libtlagent.la libtlcommon.la $(CHECK_LIBS) \
	$(LIBUNWIND_LIBS) $(XXHASH_LIBS) -ldl -lpthread -lm
TESTS += tests/unit/test_leakscan

# The agent's own mappings go through vm.c, never through the mmap hook (vm.c)
check_PROGRAMS += tests/unit/test_vm
tests_unit_test_vm_SOURCES = tests/unit/test_vm.c
tests_unit_test_vm_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_vm_LDADD = libtlagent.la libtlcommon.la $(CHECK_LIBS) \
	$(LIBUNWIND_LIBS) $(XXHASH_LIBS) -ldl -lpthread -lm
TESTS += tests/unit/test_vm

# Shared-memory storages the API registered: forgotten at their munmap (shm.c)
check_PROGRAMS += tests/unit/test_shm
tests_unit_test_shm_SOURCES = tests/unit/test_shm.c
tests_unit_test_shm_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_shm_LDADD = libtlagent.la libtlcommon.la $(CHECK_LIBS) \
	$(LIBUNWIND_LIBS) $(XXHASH_LIBS) -ldl -lpthread -lm
TESTS += tests/unit/test_shm

# CUDA: the CUDA libraries' own C++ new'd blocks are sampled, not full stacks (cuda)
TESTS += tests/integration/cuda_lib_new.sh
EXTRA_DIST += tests/integration/cuda_lib_new.sh tests/workloads/cuda_lib_new.c \
	tests/workloads/cuda_lib_new.py

# all mode's fast path (allmode): the unwind cache, the event clock's reuse, thread tags.
check_PROGRAMS += tests/unit/test_ucache
tests_unit_test_ucache_SOURCES = tests/unit/test_ucache.c
tests_unit_test_ucache_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_ucache_LDADD = libtlagent.la libtlcommon.la $(CHECK_LIBS) \
	$(LIBUNWIND_LIBS) $(XXHASH_LIBS) -ldl -lpthread -lm
TESTS += tests/unit/test_ucache
# The unwind cache's stacks, from a program built -O2 without frame pointers.
check_PROGRAMS += tests/workloads/ucache_paths
tests_workloads_ucache_paths_SOURCES = tests/workloads/ucache_paths.c
tests_workloads_ucache_paths_CFLAGS = $(AM_CFLAGS) -g -O2 -fomit-frame-pointer
tests_workloads_ucache_paths_LDADD = -lpthread
TESTS += tests/integration/agent_ucache.sh
EXTRA_DIST += tests/integration/agent_ucache.sh

# CUDA: C++ blocks a CUDA library has libstdc++ make are sampled (issue 10)
TESTS += tests/integration/cuda_lib_string.sh
EXTRA_DIST += tests/integration/cuda_lib_string.sh tests/workloads/cuda_lib_string.cc \
	tests/workloads/cuda_lib_string.py

# libunwind's signal blocking inside the agent's unwinds (unwinder.h).
check_PROGRAMS += tests/workloads/agent_unwind_cost
tests_workloads_agent_unwind_cost_SOURCES = tests/workloads/agent_unwind_cost.c
tests_workloads_agent_unwind_cost_CFLAGS = $(AGENT_WL_CFLAGS)
TESTS += tests/integration/agent_unwind_cost.sh
EXTRA_DIST += tests/integration/agent_unwind_cost.sh
