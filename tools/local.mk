# tools: the tensorleak CLI.
bin_PROGRAMS += tensorleak
tensorleak_SOURCES = \
	tools/tensorleak.c \
	tools/cli.h \
	tools/exit_codes.h \
	tools/cmd_run.c \
	tools/launch.c \
	tools/launch.h \
	tools/project.c \
	tools/project.h \
	tools/procs.c \
	tools/procs.h \
	tools/settle.c \
	tools/settle.h \
	tools/run_notes.c \
	tools/run_notes.h \
	tools/size.c \
	tools/size.h \
	tools/outfile.c \
	tools/outfile.h \
	tools/say.c \
	tools/say.h \
	tools/args.c \
	tools/args.h \
	tools/cmd_report.c \
	tools/cmd_check.c \
	tools/check_args.c \
	tools/check_args.h \
	tools/cmd_diff.c \
	tools/cmd_compress.c
tensorleak_LDADD = libtlreport.la libtlcommon.la $(LIBDW_LIBS) $(ZSTD_LIBS) -lstdc++ -lm
