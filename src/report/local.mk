# src/report: the report library, one folder per stage of the pipeline
# (docs/internals.md): read/ (open, load, stream the events), analyze/
# (model, symbolize, lineage, regions, suppressions), render/ (text, JSON,
# HTML), cmd/ (what report and diff run), check/ (`check` as one module:
# its model, evaluation and verdicts). Linked into the tensorleak CLI and
# the report unit tests.
noinst_LTLIBRARIES += libtlreport.la
libtlreport_la_SOURCES = \
	src/report/read/map.c src/report/read/map.h src/report/read/grow.h \
	src/report/read/open.c \
	src/report/read/reader.c src/report/read/reader.h \
	src/report/read/options.c src/report/read/options.h \
	src/report/read/event.h src/report/read/sites.c src/report/read/skim.h \
	src/report/read/stackdelta.c src/report/read/stackdelta.h \
	src/report/read/stream.c src/report/read/stream.h \
	src/report/read/aggregate.c src/report/read/aggregate.h \
	src/report/read/peek.c \
	src/report/read/zchunk.c src/report/read/zchunk.h \
	src/report/read/zmodel.c src/report/read/zmodel.h \
	src/report/analyze/model.c src/report/analyze/model.h \
	src/report/analyze/site_stats.c src/report/analyze/site_stats.h \
	src/report/analyze/model_agg.c \
	src/report/analyze/storages.c src/report/analyze/storages.h \
	src/report/analyze/regions.c src/report/analyze/regions.h \
	src/report/analyze/role.c src/report/analyze/role.h \
	src/report/analyze/steps.c src/report/analyze/steps.h \
	src/report/analyze/suppress.c src/report/analyze/suppress.h \
	src/report/analyze/lineage.c src/report/analyze/lineage.h \
	src/report/analyze/symbolize.c src/report/analyze/symbolize.h \
	src/report/analyze/symtab.c src/report/analyze/symtab.h \
	src/report/analyze/frames.c src/report/analyze/frames.h \
	src/report/analyze/size_text.c src/report/analyze/size_text.h \
	src/report/render/json.c src/report/render/json.h \
	src/report/render/escape.c src/report/render/escape.h \
	src/report/render/render.h src/report/render/options.h \
	src/report/render/common.c \
	src/report/render/mode.c \
	src/report/render/render_text.c \
	src/report/render/site_group.c src/report/render/site_group.h \
	src/report/render/text_frames.c \
	src/report/render/text_end.c \
	src/report/render/render_json.c \
	src/report/render/render_json_end.c \
	src/report/render/render_json_frames.c \
	src/report/render/render_json_problem.c \
	src/report/analyze/timeline.c src/report/analyze/timeline.h \
	src/report/render/flame.c src/report/render/flame.h \
	src/report/render/render_folded.c \
	src/report/render/render_html.c \
	src/report/status.c src/report/status.h \
	src/report/progress.c src/report/progress.h \
	src/report/pipeline.c src/report/pipeline.h \
	src/report/cmd/compress.c src/report/cmd/compress.h \
	src/report/cmd/diff.c src/report/cmd/diff.h \
	src/report/cmd/report.c src/report/cmd/report.h \
	src/report/cmd/report_run.c src/report/cmd/run_paths.c src/report/cmd/run_paths.h \
	src/report/cmd/run_ranks.c src/report/cmd/run_ranks.h \
	src/report/check/check.h src/report/check/options.c \
	src/report/check/verdict.h src/report/check/verdict.c \
	src/report/check/eval.c src/report/check/run.c src/report/check/run_jobs.c \
	src/report/check/verdict_text.c src/report/check/verdict_json.c \
	src/report/check/verdict_junit.c
libtlreport_la_CFLAGS = $(AM_CFLAGS) $(LIBDW_CFLAGS) $(ZSTD_CFLAGS)
libtlreport_la_LIBADD = libtlcommon.la $(LIBDW_LIBS) $(ZSTD_LIBS)

# The HTML report's page (markup, style, script), compiled in as bytes.
nodist_libtlreport_la_SOURCES = src/report/render/html_page.c
src/report/render/html_page.c: $(srcdir)/src/report/render/html/report.html \
		$(srcdir)/src/report/render/html/embed.sh
	$(AM_V_GEN)$(MKDIR_P) src/report/render && \
	$(SHELL) $(srcdir)/src/report/render/html/embed.sh tl_html_page \
		$(srcdir)/src/report/render/html/report.html > $@.tmp && mv $@.tmp $@
CLEANFILES += src/report/render/html_page.c
EXTRA_DIST += src/report/render/html/report.html src/report/render/html/embed.sh
