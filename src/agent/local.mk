# src/agent: libtensorleak.so, the LD_PRELOAD agent. libtlagent.la holds
# everything but the interposed entry points, for the unit tests.
# -Wvla: the unwind cache takes the agent's own frames for fixed-size ones (stack.c).
AGENT_CFLAGS = $(AM_CFLAGS) -Wvla -fvisibility=hidden -ftls-model=initial-exec -fexceptions \
	$(JEMALLOC_CFLAGS) $(LIBUNWIND_CFLAGS) $(XXHASH_CFLAGS)

noinst_LTLIBRARIES += libtlagent.la
libtlagent_la_SOURCES = \
	src/agent/agent.c src/agent/agent.h \
	src/agent/c10.c src/agent/c10.h \
	src/agent/numpy.c src/agent/numpy.h \
	src/agent/numpy_copy.c src/agent/numpy_copy.h \
	src/agent/cudalibs.c src/agent/cudalibs.h src/agent/cudart.c src/agent/cudart.h \
	src/agent/cudart_static.c src/agent/cudart_static.h \
	src/agent/checkpoint.c src/agent/checkpoint.h \
	src/agent/clock.c src/agent/clock.h \
	src/agent/live.c src/agent/live.h \
	src/agent/leakscan.c src/agent/leakscan.h src/agent/deadstacks.c src/agent/deadstacks.h \
	src/agent/config.c src/agent/config.h \
	src/agent/counters.c src/agent/counters.h \
	src/agent/record.c src/agent/record.h \
	src/agent/record_scan.c src/agent/record_scan.h \
	src/agent/tsd.c src/agent/tsd.h \
	src/agent/endsig.c src/agent/endsig.h src/agent/follow.c src/agent/follow.h \
	src/agent/modules.c src/agent/modules.h \
	src/agent/stack.c src/agent/stack.h src/agent/stackdelta.c src/agent/stackdelta.h \
	src/agent/unwinder.c src/agent/unwinder.h \
	src/agent/writer.c src/agent/writer.h src/agent/wcursor.h \
	src/agent/api.c src/agent/api.h src/agent/shm.c src/agent/shm.h \
	src/agent/blocks.c src/agent/blocks.h \
	src/agent/vm.c src/agent/vm.h \
	src/agent/pyframes.c src/agent/pyframes.h src/agent/pyframes_layout.h \
	src/agent/pydead.c src/agent/pydead.h src/agent/env.c src/agent/env.h src/agent/utf8.h
libtlagent_la_CFLAGS = $(AGENT_CFLAGS)

# -lgcc_s before libunwind: libunwind.so also defines libgcc_s's _Unwind_*
# API, and the agent's needed libraries enter the process's global scope ahead
# of the program's, so libunwind first made it the unwinder of every C++
# exception of the program (tests/integration/agent_unwind_scope.sh).
# No $(XXHASH_LIBS): the agent uses xxHash in its header-only mode
# (XXH_INLINE_ALL in each file that includes xxhash.h), so libxxhash.so is not
# one more library in the process's global scope, which the dynamic linker
# searches for each of torch's ~300k symbol lookups at its import.
pkglib_LTLIBRARIES += libtensorleak.la
libtensorleak_la_SOURCES = src/agent/hooks.c src/agent/hooks.h src/agent/hooks_cxx.c \
	src/agent/hooks_proc.c src/agent/hooks_cuda.c src/agent/heapinfo.c src/agent/heapinfo.h
libtensorleak_la_CFLAGS = $(AGENT_CFLAGS)
libtensorleak_la_LDFLAGS = -module -avoid-version -shared -Wl,-z,now \
	-Wl,--version-script=$(top_srcdir)/src/agent/libtensorleak.sym
libtensorleak_la_LIBADD = libtlagent.la libtlcommon.la \
	$(JEMALLOC_LIBS) -lgcc_s $(LIBUNWIND_LIBS) -ldl -lpthread -lm
EXTRA_libtensorleak_la_DEPENDENCIES = src/agent/libtensorleak.sym
EXTRA_DIST += src/agent/libtensorleak.sym
