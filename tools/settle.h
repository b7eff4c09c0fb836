/* settle.h - wait for a run's processes to be done with their traces (used
 * by launch.c). */
#ifndef TL_SETTLE_H
#define TL_SETTLE_H

#include "report/pipeline.h"
#include "tools/launch.h"
#include "tools/run_notes.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdint.h>

/* The next trace of session in the directory stream d (of dir): its path
 * (PATH_MAX bytes) and header (tl_trace_peek); false at the end. Other
 * files, and traces of other sessions, are passed. */
bool tl_settle_next_trace(DIR *d, const char *dir, uint64_t session, char *path,
                          tl_trace_info_t *info);

/* Waits, polling every 20 ms, until the run's processes are settled: for
 * at most l->wait_ms, every trace of the session in dir is done (its END
 * written, or its process gone), and for at most l->start_wait_ms, no live
 * process of the run (procs.h; agent: the agent's path) is without an open
 * trace (one whose PROCESS record is written: its agent has started). A process can outlive the
 * command (multiprocessing's forkserver and resource tracker, a daemon): its trace would otherwise
 * be judged while it still runs, at its last event; and one forked or exec'd just before the
 * command ended (its parent killed) would be missed before its agent opens its trace. Both bounds
 * are clock time; the second counts from when the first one let it go, and /proc is read only then.
 * Leaves l->still_running (0 without wait_ms), l->unstarted and their pids as they are at the
 * bound. The run's notes (NULL: none) are taken meanwhile. */
void tl_settle_wait(const char *dir, tl_launch_t *l, const char *agent, tl_run_notes_t *notes);

/* One line on stderr: the run's processes that had not opened their trace
 * at the bound (l->unstarted, l->unstarted_pids), left out. */
void tl_settle_say_unstarted(const tl_launch_t *l);

/* The size of tl_settle_pids' buffer. */
#define TL_SETTLE_PIDS_LEN 192

/* "4242, 4243, ...": the first TL_LAUNCH_RUNNING_PIDS of pids (n of them
 * in all) into buf (TL_SETTLE_PIDS_LEN bytes), ", ..." after them when
 * there are more. */
void tl_settle_pids(char *buf, const uint64_t *pids, unsigned n);

#endif
