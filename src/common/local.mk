# src/common: the trace format, shared by agent and reporter.
noinst_LTLIBRARIES += libtlcommon.la
libtlcommon_la_SOURCES = \
	src/common/trace_chunk.c src/common/trace_chunk.h \
	src/common/trace_codec.c \
	src/common/block.h \
	src/common/notes.h \
	src/common/session_mark.h \
	src/common/trace_format.h \
	src/common/varint.h
libtlcommon_la_CFLAGS = $(AM_CFLAGS) -fvisibility=hidden
