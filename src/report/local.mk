# src/report: the report library (reader, model, symbolizer, renderers),
# linked into the tensorleak CLI and the report unit tests.
noinst_LTLIBRARIES += libtlreport.la
libtlreport_la_SOURCES = \
	src/report/map.c src/report/map.h \
	src/report/reader.c src/report/reader.h \
	src/report/stream.c src/report/stream.h \
	src/report/aggregate.c src/report/aggregate.h \
	src/report/peek.c \
	src/report/model.c src/report/model.h \
	src/report/storages.c src/report/storages.h \
	src/report/regions.c src/report/regions.h \
	src/report/suppress.c src/report/suppress.h \
	src/report/check.c src/report/check.h src/report/check_impl.h \
	src/report/check_render.c \
	src/report/diff.c src/report/diff.h \
	src/report/lineage.c src/report/lineage.h \
	src/report/symbolize.c src/report/symbolize.h \
	src/report/json.c src/report/json.h \
	src/report/escape.c src/report/escape.h \
	src/report/render.h \
	src/report/render_text.c \
	src/report/render_json.c \
	src/report/report.c src/report/report.h
libtlreport_la_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS)
libtlreport_la_LIBADD = libtlcommon.la $(LIBDW_LIBS)
