# tests/report.mk: the report library's unit runner, its workloads and the
# `tensorleak report` integration scripts.
noinst_HEADERS += tests/unit/test_report.h tests/workloads/report_tracegen.h

check_PROGRAMS += tests/workloads/report_symtarget tests/workloads/report_mktrace
# Symbolizer target: debug info, no optimisation, so a call keeps its line.
tests_workloads_report_symtarget_SOURCES = tests/workloads/report_symtarget.c
tests_workloads_report_symtarget_CFLAGS = $(AM_CFLAGS) -g -O0
tests_workloads_report_mktrace_SOURCES = tests/workloads/report_mktrace.c
tests_workloads_report_mktrace_LDADD = libtlcommon.la

check_PROGRAMS += tests/unit/test_report
tests_unit_test_report_SOURCES = \
	tests/unit/test_report.c \
	tests/unit/test_report_model.c \
	tests/unit/test_report_lineage.c \
	tests/unit/test_report_json.c \
	tests/unit/test_report_sym.c \
	tests/unit/test_report_check.c \
	tests/unit/test_report_progress.c \
	tests/unit/test_report_compress.c \
	tests/unit/test_report_zmodel.c \
	tests/unit/test_report_delta.c
tests_unit_test_report_CPPFLAGS = $(AM_CPPFLAGS) \
	-DTL_SYMTARGET='"$(abs_top_builddir)/tests/workloads/report_symtarget"'
tests_unit_test_report_CFLAGS = $(UNIT_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_report_LDADD = libtlreport.la libtlcommon.la $(LIBDW_LIBS) $(ZSTD_LIBS) $(CHECK_LIBS) -lstdc++
TESTS += tests/unit/test_report

# tensorleak check and diff: C workloads with known bytes, the PyTorch
# acceptance loop (plain script and pytest), the pytest plugin.
check_PROGRAMS += tests/workloads/check_leaks
tests_workloads_check_leaks_SOURCES = tests/workloads/check_leaks.c
tests_workloads_check_leaks_CFLAGS = $(AM_CFLAGS) -g -O0 -fno-omit-frame-pointer -fno-inline
TESTS += \
	tests/integration/check_exit_codes.sh \
	tests/integration/check_limits.sh \
	tests/integration/check_suppressions.sh \
	tests/integration/check_regions.sh \
	tests/integration/check_sampled_regions.sh \
	tests/integration/check_python.sh \
	tests/integration/check_losses.sh \
	tests/integration/pytest_plugin.sh \
	tests/integration/pytest_busy.sh \
	tests/integration/diff_runs.sh
EXTRA_DIST += \
	tests/integration/check_exit_codes.sh \
	tests/integration/check_limits.sh \
	tests/integration/check_suppressions.sh \
	tests/integration/check_regions.sh \
	tests/integration/check_sampled_regions.sh \
	tests/integration/check_python.sh \
	tests/integration/check_losses.sh \
	tests/integration/pytest_plugin.sh \
	tests/integration/pytest_busy.sh \
	tests/integration/diff_runs.sh \
	tests/integration/check_json.py \
	tests/workloads/check_losses.py \
	tests/workloads/check_pytest \
	tests/workloads/check_plugin \
	tests/workloads/check_plugin_busy

TESTS += \
	tests/integration/report_bad_input.sh \
	tests/integration/report_json.sh \
	tests/integration/report_seed_table.sh
EXTRA_DIST += \
	tests/integration/report_bad_input.sh \
	tests/integration/report_json.sh \
	tests/integration/report_seed_table.sh \
	tests/workloads/report_seed_table.py

# The CLI on hostile input: FIFOs, damaged traces, output files, terminal escapes.
TESTS += \
	tests/integration/cli_fifo.sh \
	tests/integration/cli_damaged.sh \
	tests/integration/cli_output.sh \
	tests/integration/cli_escape.sh \
	tests/integration/cli_progress.sh
EXTRA_DIST += \
	tests/integration/cli_fifo.sh \
	tests/integration/cli_damaged.sh \
	tests/integration/cli_output.sh \
	tests/integration/cli_escape.sh \
	tests/integration/cli_progress.sh

# The trace reader's fuzz target (docs/fuzzing.md): the report library's
# sources compiled again by clang with libFuzzer, ASan and UBSan (Automake
# has one compiler per build, hence the explicit rule); fuzz_trace.sh runs
# it for a bounded time over a corpus of real and generated traces.
EXTRA_DIST += tests/fuzz/fuzz_trace.c tests/fuzz/corpus tests/integration/fuzz_trace.sh
TESTS += tests/integration/fuzz_trace.sh
FUZZ_CFLAGS = -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -fno-omit-frame-pointer
if TL_FUZZ
check_DATA = tests/fuzz/fuzz_trace
CLEANFILES += tests/fuzz/fuzz_trace
tests/fuzz/fuzz_trace: $(srcdir)/tests/fuzz/fuzz_trace.c $(libtlreport_la_SOURCES) \
		$(libtlcommon_la_SOURCES) $(nodist_libtlreport_la_SOURCES)
	@$(MKDIR_P) tests/fuzz
	$(AM_V_CCLD)srcs=; for f in $(libtlreport_la_SOURCES) $(libtlcommon_la_SOURCES); do \
	  case $$f in *.c) srcs="$$srcs $(srcdir)/$$f";; esac; done; \
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEFS) -I$(top_srcdir) $(AM_CPPFLAGS) $(CPPFLAGS) $(LIBDW_CFLAGS) \
	  $(XXHASH_CFLAGS) $(ZSTD_CFLAGS) -o $@ $(srcdir)/tests/fuzz/fuzz_trace.c $$srcs \
	  $(nodist_libtlreport_la_SOURCES) \
	  $(LIBDW_LIBS) $(XXHASH_LIBS) $(ZSTD_LIBS) -lstdc++ -lm
endif

# The streaming reader: the report's memory does not grow with trace length.
TESTS += tests/integration/report_memory.sh
EXTRA_DIST += tests/integration/report_memory.sh

# Compressed traces: run --compress, tensorleak compress, cut anywhere.
TESTS += tests/integration/compress.sh
EXTRA_DIST += tests/integration/compress.sh

# Hostile run: the CLI's own stderr lines escape the names they echo.
TESTS += tests/integration/hostile_cli_lines.sh
EXTRA_DIST += tests/integration/hostile_cli_lines.sh

# Hostile run: help and version on a full stdout exit 6.
TESTS += tests/integration/hostile_help_full.sh
EXTRA_DIST += tests/integration/hostile_help_full.sh

# HTML and folded reports (docs/report-html.md): escaping and the timeline
# in a unit runner, the pages themselves in headless Chromium.
check_PROGRAMS += tests/unit/test_report_html
tests_unit_test_report_html_SOURCES = tests/unit/test_report_html.c
tests_unit_test_report_html_CFLAGS = $(UNIT_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_report_html_LDADD = libtlreport.la libtlcommon.la $(LIBDW_LIBS) $(ZSTD_LIBS) $(CHECK_LIBS) -lstdc++
TESTS += tests/unit/test_report_html
TESTS += tests/integration/html_report.sh tests/integration/html_hostile.sh
EXTRA_DIST += tests/integration/html_report.sh tests/integration/html_hostile.sh \
	tests/integration/html_lib.sh tests/integration/html_browser.py \
	tests/integration/html_run.py

# Leak kinds (issue 11 item 4): the agent's leak scan, check's --max-leak.
check_PROGRAMS += tests/workloads/leak_kinds
tests_workloads_leak_kinds_SOURCES = tests/workloads/leak_kinds.c
tests_workloads_leak_kinds_CFLAGS = $(AM_CFLAGS) -g -O0 -fno-omit-frame-pointer -fno-inline
TESTS += tests/integration/check_leak_kinds.sh
EXTRA_DIST += tests/integration/check_leak_kinds.sh tests/workloads/train_noleak.py

# The browser tests leave their screenshots for the log; `make clean` removes them.
clean-local: clean-html-screenshots
clean-html-screenshots:
	-rm -rf tests/integration/html-screenshots
.PHONY: clean-html-screenshots

# HTML report: a timeline series per CUDA device and pinned host storages (issue 13).
TESTS += tests/integration/html_cuda.sh
EXTRA_DIST += tests/integration/html_cuda.sh

# check --html=FILE: the name checked before the command runs (issue 13).
TESTS += tests/integration/check_html_path.sh
EXTRA_DIST += tests/integration/check_html_path.sh

# Verdicts that do not guess (issue 11 items 5-7): loop steps, peak sites, C frames.
TESTS += tests/integration/check_verdicts.sh tests/integration/check_verdicts_torch.sh
EXTRA_DIST += tests/integration/check_verdicts.sh tests/integration/check_verdicts_torch.sh \
	tests/workloads/check_ext.c

# check gates on every process of the run (forked workers), --main-process-only
TESTS += tests/integration/check_children.sh tests/integration/check_pool_idioms.sh
EXTRA_DIST += tests/integration/check_children.sh tests/workloads/fork_worker_leak.py \
	tests/integration/check_pool_idioms.sh tests/workloads/pool_idioms.py

# one report over every process of a run: workers, hosts, ranks
TESTS += tests/integration/report_run.sh tests/integration/report_shared.sh \
	tests/integration/report_shm_numpy.sh tests/integration/report_pool.sh
EXTRA_DIST += tests/integration/report_run.sh tests/workloads/ddp_rank_leak.py \
	tests/integration/report_shared.sh tests/workloads/dataloader_pinned.py \
	tests/workloads/mp_queue_pinned.py tests/workloads/dataloader_stream.py \
	tests/integration/report_shm_numpy.sh tests/workloads/numpy_shared_memory.py \
	tests/integration/report_pool.sh tests/workloads/pool_cache.py

# the system's tools a program runs are not gated
TESTS += tests/integration/check_system_tools.sh
EXTRA_DIST += tests/integration/check_system_tools.sh

# Python names beyond Latin-1 in every renderer
TESTS += tests/integration/report_utf8.sh
EXTRA_DIST += tests/integration/report_utf8.sh tests/workloads/utf8_names.py

# the dynamic loader's suppressions hide one-time allocations only
TESTS += tests/integration/check_dlopen_loop.sh
EXTRA_DIST += tests/integration/check_dlopen_loop.sh tests/workloads/dlopen_ctor_lib.c \
	tests/workloads/dlopen_loop.c

# programs that change their environment (launchers: torchrun's) pass
TESTS += tests/integration/check_environ.sh tests/integration/check_follow_env.sh
EXTRA_DIST += tests/integration/check_environ.sh tests/integration/check_follow_env.sh

# a leak before sys.exit(main()) is found (the scan's jmp_buf held stale words)
TESTS += tests/integration/check_sys_exit.sh
EXTRA_DIST += tests/integration/check_sys_exit.sh tests/workloads/exit_leak.py

# a fork child's blocks held through its parent's (the parent's blocks: roots)
TESTS += tests/integration/check_fork_holder.sh
EXTRA_DIST += tests/integration/check_fork_holder.sh

# a block lost with the last allocation: no agent state holds it
TESTS += tests/integration/check_last_leak.sh
EXTRA_DIST += tests/integration/check_last_leak.sh

# a run's killed process: its leak limits not judged, its peak is
TESTS += tests/integration/check_killed_child.sh
EXTRA_DIST += tests/integration/check_killed_child.sh

# the agent's path: made absolute; a space refused
TESTS += tests/integration/run_agent_path.sh
EXTRA_DIST += tests/integration/run_agent_path.sh

# a launcher command (bash, timeout): its program checked, not the tool
TESTS += tests/integration/check_launcher.sh
EXTRA_DIST += tests/integration/check_launcher.sh
TESTS += tests/integration/check_own_programs.sh
EXTRA_DIST += tests/integration/check_own_programs.sh

# a leak whose address only freed Python objects hold (CPython's pools)
TESTS += tests/integration/check_stale_slot.sh
EXTRA_DIST += tests/integration/check_stale_slot.sh tests/workloads/stale_slot.py

# a leak whose address a live block's unwritten bytes hold (reused memory)
check_PROGRAMS += tests/workloads/stale_reuse
tests_workloads_stale_reuse_SOURCES = tests/workloads/stale_reuse.c
tests_workloads_stale_reuse_CFLAGS = $(AM_CFLAGS) -g -O0 -fno-omit-frame-pointer -fno-inline
TESTS += tests/integration/check_stale_reuse.sh
EXTRA_DIST += tests/integration/check_stale_reuse.sh tests/workloads/stale_dataslot.py

# SIGTERM to a job's process group while a Pool runs (the repeat forwarded)
TESTS += tests/integration/check_term_group.sh
EXTRA_DIST += tests/integration/check_term_group.sh

# --baseline counts the baseline's leak with the run's --leak-kinds and --device
TESTS += tests/integration/check_baseline_kinds.sh
EXTRA_DIST += tests/integration/check_baseline_kinds.sh

# check's verdict says what --max-leak counted where the leak kinds do not apply
TESTS += tests/integration/check_leak_counted.sh
EXTRA_DIST += tests/integration/check_leak_counted.sh

# check passes a DataLoader run that keeps nothing, fails one that keeps batches
TESTS += tests/integration/check_dataloader.sh
EXTRA_DIST += tests/integration/check_dataloader.sh tests/workloads/dataloader_leak.py
TESTS += tests/integration/check_region_jobs.sh
EXTRA_DIST += tests/integration/check_region_jobs.sh tests/workloads/dataloader_region.py

# gate: check --max-problem-storage, the end point's problem storages (issue 11)
TESTS += tests/integration/check_problems.sh
EXTRA_DIST += tests/integration/check_problems.sh

# gate: the leak kind of each site in report's and check's JSON (issue 11)
TESTS += tests/integration/report_leak_kinds.sh
EXTRA_DIST += tests/integration/report_leak_kinds.sh

# gate: check -- CMD removes its traces after a pass, keeps and names them after a failure
TESTS += tests/integration/check_traces.sh
EXTRA_DIST += tests/integration/check_traces.sh

# gate: report's JSON leaves out the stacks of sites a default suppression matches
TESTS += tests/integration/report_json_size.sh
EXTRA_DIST += tests/integration/report_json_size.sh

check_PROGRAMS += tests/workloads/leak_dead_thread
tests_workloads_leak_dead_thread_SOURCES = tests/workloads/leak_dead_thread.c
tests_workloads_leak_dead_thread_CFLAGS = $(AM_CFLAGS) -g -O0 -fno-omit-frame-pointer -fno-inline
tests_workloads_leak_dead_thread_LDADD = -lpthread
TESTS += tests/integration/check_dead_thread.sh
EXTRA_DIST += tests/integration/check_dead_thread.sh

# pip package (issue 25): tools/build-wheel.sh's wheel in fresh venvs of two CPythons
TESTS += tests/integration/pip_wheel.sh
EXTRA_DIST += tests/integration/pip_wheel.sh

check_PROGRAMS += tests/workloads/deep_stacks
tests_workloads_deep_stacks_SOURCES = tests/workloads/deep_stacks.c
tests_workloads_deep_stacks_CFLAGS = $(AM_CFLAGS) -g -O0 -fno-omit-frame-pointer -fno-inline
tests_workloads_deep_stacks_LDADD = -lpthread
TESTS += tests/integration/stack_delta.sh
EXTRA_DIST += tests/integration/stack_delta.sh
