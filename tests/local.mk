# tests: Check unit runners (TAP), integration scripts (exit 0 pass, 1 fail,
# 77 skip, 99 hard error), workloads with known answers.
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
TEST_EXTENSIONS = .sh
SH_LOG_COMPILER = $(SHELL)
AM_TESTS_ENVIRONMENT = \
	TL_BUILDDIR='$(abs_top_builddir)'; export TL_BUILDDIR; \
	TL_SRCDIR='$(abs_top_srcdir)'; export TL_SRCDIR; \
	PYTHON3='$(PYTHON3)'; export PYTHON3;

UNIT_CFLAGS = $(AM_CFLAGS) $(CHECK_CFLAGS)
noinst_HEADERS += tests/unit/check_main.h

check_PROGRAMS += tests/unit/test_common
tests_unit_test_common_SOURCES = tests/unit/test_common.c
tests_unit_test_common_CFLAGS = $(UNIT_CFLAGS)
tests_unit_test_common_LDADD = libtlcommon.la $(CHECK_LIBS)
TESTS += tests/unit/test_common

check_PROGRAMS += tests/unit/test_tools
tests_unit_test_tools_SOURCES = tests/unit/test_tools.c tools/size.c tools/size.h tools/procs.c \
	tools/procs.h tools/project.c tools/project.h
tests_unit_test_tools_CFLAGS = $(UNIT_CFLAGS) $(LIBDW_CFLAGS)
tests_unit_test_tools_LDADD = libtlreport.la libtlcommon.la $(LIBDW_LIBS) $(ZSTD_LIBS) $(CHECK_LIBS) -lstdc++ -lm
TESTS += tests/unit/test_tools

include tests/agent.mk
include tests/report.mk

# Workloads with known answers and the integration scripts that run the CLI.
WORKLOAD_CFLAGS = -g -O0 -fno-omit-frame-pointer -fno-inline -fno-optimize-sibling-calls -pthread
check_PROGRAMS += tests/workloads/leaky_threads tests/workloads/fork_leaks tests/workloads/fork_three \
	tests/workloads/env_churn tests/workloads/env_child tests/workloads/fork_holder \
	tests/workloads/last_leak \
	tests/workloads/reg_live
tests_workloads_leaky_threads_SOURCES = tests/workloads/leaky_threads.c
tests_workloads_leaky_threads_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_fork_leaks_SOURCES = tests/workloads/fork_leaks.c
tests_workloads_fork_leaks_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_fork_three_SOURCES = tests/workloads/fork_three.c
tests_workloads_fork_three_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_env_churn_SOURCES = tests/workloads/env_churn.c
tests_workloads_env_churn_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_env_child_SOURCES = tests/workloads/env_child.c
tests_workloads_env_child_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_fork_holder_SOURCES = tests/workloads/fork_holder.c
tests_workloads_fork_holder_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_last_leak_SOURCES = tests/workloads/last_leak.c
tests_workloads_last_leak_CFLAGS = $(WORKLOAD_CFLAGS)
tests_workloads_reg_live_SOURCES = tests/workloads/reg_live.c
tests_workloads_reg_live_CFLAGS = -g -O2
TESTS += \
	tests/integration/run_c_leaks.sh \
	tests/integration/run_fork.sh \
	tests/integration/run_outlived.sh \
	tests/integration/run_orphan.sh \
	tests/integration/run_notes_many.sh \
	tests/integration/run_torch.sh \
	tests/integration/run_exit_codes.sh \
	tests/integration/run_autograd.sh \
	tests/integration/case_01.sh \
	tests/integration/case_02.sh \
	tests/integration/case_03.sh \
	tests/integration/case_06.sh \
	tests/integration/case_08.sh \
	tests/integration/case_09.sh
EXTRA_DIST += \
	tests/integration/lib.sh \
	tests/integration/tlcheck.py \
	tests/integration/run_c_leaks.sh \
	tests/integration/run_fork.sh \
	tests/integration/run_outlived.sh \
	tests/integration/run_orphan.sh \
	tests/integration/run_notes_many.sh \
	tests/integration/run_torch.sh \
	tests/integration/run_exit_codes.sh \
	tests/integration/cases_check.py \
	tests/integration/case_01.sh \
	tests/integration/case_02.sh \
	tests/integration/case_03.sh \
	tests/integration/case_06.sh \
	tests/integration/case_08.sh \
	tests/integration/case_09.sh \
	tests/cases \
	tests/workloads/torch_storages.py \
	tests/workloads/autograd_leaf.py \
	tests/integration/run_autograd.sh

# Endings: forked workers that end through os._exit get the os_exit end point.
TESTS += tests/integration/run_workers.sh
EXTRA_DIST += tests/integration/run_workers.sh tests/workloads/py_workers.py tests/workloads/py_term.py

# Endings: run through a shim reports the last image; traces in one directory per run.
TESTS += tests/integration/run_shim.sh tests/integration/run_privdrop.sh
EXTRA_DIST += tests/integration/run_shim.sh tests/integration/run_privdrop.sh

# Python provider on real PyTorch installs (torch 1.13 and 2.x): tensor kinds
# it must not read, warnings, failures as notes, late and repeated imports.
TESTS += tests/integration/py_tensor_kinds.sh tests/integration/py_guard.sh
EXTRA_DIST += tests/integration/py_tensor_kinds.sh tests/workloads/py_tensor_kinds.py \
	tests/integration/py_guard.sh tests/workloads/py_guard.py

# Python provider: which host storages are live (the agent's storages_live),
# and the cycle search skipped when the walk found them all.
TESTS += tests/integration/py_storages_live.sh
EXTRA_DIST += tests/integration/py_storages_live.sh tests/workloads/py_storages_live.py
TESTS += tests/integration/report_aggregate_end.sh
EXTRA_DIST += tests/integration/report_aggregate_end.sh

# The agent's libunwind does not take over the program's C++ exceptions.
TESTS += tests/integration/agent_unwind_scope.sh
EXTRA_DIST += tests/integration/agent_unwind_scope.sh

# Hostile run: run and check started with SIGCHLD ignored keep the status.
TESTS += tests/integration/hostile_sigchld.sh
EXTRA_DIST += tests/integration/hostile_sigchld.sh

# Fresh-user checks: TorchScript compiles functions that call the wrapped copy entry points.
TESTS += tests/integration/fresh_jit.sh
EXTRA_DIST += tests/integration/fresh_jit.sh tests/workloads/fresh_jit.py

# Fresh-user checks: check through a bash shim removes the shim's trace, as run does.
TESTS += tests/integration/fresh_check_shim.sh
EXTRA_DIST += tests/integration/fresh_check_shim.sh

# Diagnosis: what holds each storage (paths, cycles, caches, tracebacks),
# shared cases 14-24 checked by their facts, exact pinned bytes of strided views.
TESTS += tests/integration/case_14.sh tests/integration/case_16.sh tests/integration/case_17.sh \
	tests/integration/case_22.sh tests/integration/case_24.sh
EXTRA_DIST += tests/integration/case_14.sh tests/integration/case_16.sh \
	tests/integration/case_17.sh tests/integration/case_22.sh tests/integration/case_24.sh \
	tests/integration/cases_facts.py
TESTS += tests/integration/pinned_strided.sh
EXTRA_DIST += tests/integration/pinned_strided.sh tests/workloads/pinned_strided.py \
	tests/python/test_cover.py
TESTS += tests/integration/holders_kinds.sh
EXTRA_DIST += tests/integration/holders_kinds.sh tests/workloads/holders_kinds.py
TESTS += tests/integration/holders_dict_attr.sh
EXTRA_DIST += tests/integration/holders_dict_attr.sh tests/workloads/holders_dict_attr.py
TESTS += tests/integration/holders_objects.sh
EXTRA_DIST += tests/integration/holders_objects.sh tests/workloads/holders_objects.py
TESTS += tests/integration/checkpoint_calls.sh
EXTRA_DIST += tests/integration/checkpoint_calls.sh tests/workloads/checkpoint_calls.py
TESTS += tests/integration/dup_deepcopy.sh
EXTRA_DIST += tests/integration/dup_deepcopy.sh tests/workloads/dup_deepcopy.py
TESTS += tests/integration/numpy_lazy_import.sh
EXTRA_DIST += tests/integration/numpy_lazy_import.sh tests/workloads/numpy_lazy_import.py
TESTS += tests/integration/text_peak_hidden.sh
EXTRA_DIST += tests/integration/text_peak_hidden.sh
TESTS += tests/integration/peak_end_point.sh
EXTRA_DIST += tests/integration/peak_end_point.sh
TESTS += tests/integration/where_package_init.sh
EXTRA_DIST += tests/integration/where_package_init.sh
TESTS += tests/integration/check_no_pyframes.sh
EXTRA_DIST += tests/integration/check_no_pyframes.sh
TESTS += tests/integration/check_region_replaced.sh
EXTRA_DIST += tests/integration/check_region_replaced.sh
TESTS += tests/integration/report_pool_idle.sh
EXTRA_DIST += tests/integration/report_pool_idle.sh
TESTS += tests/integration/diff_torch_same.sh
EXTRA_DIST += tests/integration/diff_torch_same.sh
TESTS += tests/integration/report_json_sites.sh
EXTRA_DIST += tests/integration/report_json_sites.sh

# CUDA storages: libcudart interposition (stand-in), PyTorch's allocator history (fixtures)
TESTS += tests/integration/cuda_standin.sh tests/integration/cuda_snapshot.sh \
	tests/integration/py_cuda_lazy.sh
EXTRA_DIST += tests/integration/cuda_standin.sh tests/integration/cuda_snapshot.sh \
	tests/integration/py_cuda_lazy.sh tests/workloads/cudart_standin.c \
	tests/workloads/cuda_prog.c tests/workloads/py_cuda_snapshot.py \
	tests/workloads/py_cuda_lazy.py tests/fixtures/cuda/README.md \
	tests/fixtures/cuda/gpu_leak.py tests/fixtures/cuda/gpu_w3.py \
	tests/fixtures/cuda/gpu_leak.snapshot.python.pickle tests/device/run.sh

# The text report a person reads: grouped problems and storages, the program's
# frames first with library frames folded, leaks after the default suppressions.
TESTS += tests/integration/text_report.sh tests/integration/text_frames.sh
EXTRA_DIST += tests/integration/text_report.sh tests/integration/text_frames.sh \
	tests/workloads/four_graphs.py

# File sizes: every C file of src/ under ~600 lines (STYLE.md)
TESTS += tests/integration/src_file_lines.sh tests/integration/src_function_lines.sh
EXTRA_DIST += tests/integration/src_file_lines.sh tests/integration/src_function_lines.sh

# docs/architecture.md names only files and file:function pairs that exist
TESTS += tests/integration/docs_paths.sh
EXTRA_DIST += tests/integration/docs_paths.sh

# check --trace=DIR, and --jobs: the same verdict a process at a time or several
TESTS += tests/integration/check_jobs.sh
EXTRA_DIST += tests/integration/check_jobs.sh

# Report library layering: no tools/ header, no printing (tl_status_t, tl_msgs_t)
TESTS += tests/integration/report_layers.sh
EXTRA_DIST += tests/integration/report_layers.sh

# numpy's buffers of every size as storages, through numpy's data-memory handler
TESTS += tests/integration/diff_storage_peak.sh
EXTRA_DIST += tests/integration/diff_storage_peak.sh tests/workloads/diff_storage_peak.py
TESTS += tests/integration/numpy_copy.sh
EXTRA_DIST += tests/integration/numpy_copy.sh tests/workloads/numpy_copy.py
TESTS += tests/integration/copy_cross_kind.sh tests/integration/py_layers.sh
EXTRA_DIST += tests/integration/copy_cross_kind.sh tests/workloads/copy_cross_kind.py \
	tests/integration/py_layers.sh
TESTS += tests/integration/numpy_handler.sh
EXTRA_DIST += tests/integration/numpy_handler.sh tests/workloads/numpy_handler.py \
	tests/python/test_numpy_handler.py
TESTS += tests/integration/report_numpy_cache.sh
TESTS += tests/integration/check_pytest_clean.sh tests/integration/check_many_storages.sh
EXTRA_DIST += tests/integration/check_many_storages.sh
TESTS += tests/integration/check_module_body.sh
EXTRA_DIST += tests/integration/check_module_body.sh
EXTRA_DIST += tests/integration/check_pytest_clean.sh tests/workloads/check_pytest_clean/test_clean.py
EXTRA_DIST += tests/integration/report_numpy_cache.sh tests/workloads/numpy_cache.py

# holders: a threading.local of a live thread, the .grad cycle of backward(create_graph=True)
TESTS += tests/integration/thread_local.sh tests/integration/grad_cycle.sh
EXTRA_DIST += tests/integration/thread_local.sh tests/workloads/thread_local.py \
	tests/integration/grad_cycle.sh tests/workloads/grad_cycle.py \
	tests/integration/sites.py

# CUDA: check --max-peak with --device and diff per device (stand-in libcudart)
TESTS += tests/integration/cuda_check_diff.sh
EXTRA_DIST += tests/integration/cuda_check_diff.sh tests/workloads/cuda_devices.c

# polish: the --frames=all hint only after a fold.
TESTS += tests/integration/text_fold_hint.sh
EXTRA_DIST += tests/integration/text_fold_hint.sh

# polish: numpy's own module state names its buffers' holder (library internals).
TESTS += tests/integration/numpy_library_state.sh
EXTRA_DIST += tests/integration/numpy_library_state.sh tests/workloads/numpy_rand_once.py

# polish: report's JSON marks the leak sites the default suppressions match.
TESTS += tests/integration/report_json_suppressed.sh
EXTRA_DIST += tests/integration/report_json_suppressed.sh

# numpy buffers' stacks: Python frames only in the default mode (numpyperf)
TESTS += tests/integration/numpy_py_stack.sh
EXTRA_DIST += tests/integration/numpy_py_stack.sh

# gate: trace path patterns, the bare usage, run's summary order (issue 11)
TESTS += tests/integration/cli_patterns.sh
EXTRA_DIST += tests/integration/cli_patterns.sh

# holders: what holds each storage on reproducers of every kind (cycles, caches, closures, tracebacks, ...)
TESTS += tests/integration/holders_unseen.sh
EXTRA_DIST += tests/integration/holders_unseen.sh tests/integration/holders_unseen.py \
	tests/workloads/unseen/u01_ctx_list.py tests/workloads/unseen/u02_pre_hook_cycle.py \
	tests/workloads/unseen/u03_create_graph.py tests/workloads/unseen/u04_peer_cycle.py \
	tests/workloads/unseen/u05_class_registry.py tests/workloads/unseen/u06_cache_method.py \
	tests/workloads/unseen/u07_nonlocal_list.py tests/workloads/unseen/u08_default_arg.py \
	tests/workloads/unseen/u09_exc_list_deep.py tests/workloads/unseen/u10_exc_info.py \
	tests/workloads/unseen/u11_adam_old_param.py tests/workloads/unseen/u12_thread_local.py \
	tests/workloads/unseen/u13_generator.py tests/workloads/unseen/u14_dict_by_id.py \
	tests/workloads/unseen/u15_column_slice.py tests/workloads/unseen/u16_loss_on_object.py \
	tests/workloads/unseen/u17_numpy_of_tensor.py \
	tests/workloads/unseen/u18_from_numpy_slice.py \
	tests/workloads/unseen/u19_ndarray_subclass.py \
	tests/workloads/unseen/u20_save_for_backward.py \
	tests/workloads/unseen/u21_model_and_optimizer.py
TESTS += tests/integration/holders_paths.sh
EXTRA_DIST += tests/integration/holders_paths.sh tests/python/test_paths.py
TESTS += tests/integration/holders_unit.sh
EXTRA_DIST += tests/integration/holders_unit.sh tests/python/test_holders.py

# CUDA: check --region --device --max-peak at the device's own peak (cuda)
TESTS += tests/integration/cuda_region_peak.sh
EXTRA_DIST += tests/integration/cuda_region_peak.sh tests/workloads/cuda_region.c

# CUDA: the allocator history drained while the program runs, wraps reconciled (cuda)
TESTS += tests/integration/cuda_drain.sh
EXTRA_DIST += tests/integration/cuda_drain.sh tests/workloads/py_cuda_drain.py

# CUDA: a statically linked CUDA runtime is detected and named in a NOTE (cuda)
TESTS += tests/integration/cuda_static.sh
EXTRA_DIST += tests/integration/cuda_static.sh tests/workloads/cuda_static.c

# CUDA: the GPU check's fact list, beside tests/device/run.sh (cuda)
EXTRA_DIST += tests/device/facts.py

# CUDA: aggregate mode keeps per-device peaks and live sets (device storages stay events) (cuda)
TESTS += tests/integration/cuda_aggregate.sh
EXTRA_DIST += tests/integration/cuda_aggregate.sh

# check's verdict says what holds a storage in the report's words (an array is no tensor)
TESTS += tests/integration/check_holder_words.sh
EXTRA_DIST += tests/integration/check_holder_words.sh

# CUDA: a shared library with a static CUDA runtime (issue 10)
TESTS += tests/integration/cuda_static_lib.sh
EXTRA_DIST += tests/integration/cuda_static_lib.sh tests/workloads/cuda_static_lib.c \
	tests/workloads/cuda_static_lib_prog.c

# CUDA: aggregate mode's device storages are totals and live sets (issue 10)
TESTS += tests/integration/cuda_aggregate_size.sh
EXTRA_DIST += tests/integration/cuda_aggregate_size.sh tests/workloads/cuda_loop.c \
	tests/workloads/py_cuda_snapshot_loop.py

# `make stress`: the long loops, run by hand, never by `make check` or CI.
# check_pool_idioms.sh with 20 runs of each idiom (issue 28's bar), under
# PYTHON3 (override it: make stress PYTHON3=/path/to/venv/bin/python).
stress: $(check_PROGRAMS) $(bin_PROGRAMS) $(pkglib_LTLIBRARIES)
	$(AM_TESTS_ENVIRONMENT) TL_POOL_ROUNDS=20 TL_POOL_STRESS=1 \
	$(SHELL) $(top_srcdir)/tests/integration/check_pool_idioms.sh
.PHONY: stress
