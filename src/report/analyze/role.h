/* role.h - what a process of a run is, from its trace alone: the main
 * process, a rank of a distributed job, a DataLoader or pool worker,
 * multiprocessing's own processes, another fork of the main program, or a
 * helper (another program). The run report's process table and check's
 * verdicts name processes by it. Pure functions of the trace; thread-safe.
 */
#ifndef TL_REPORT_ROLE_H
#define TL_REPORT_ROLE_H

#include <stddef.h>
#include <stdint.h>

#include "report/read/reader.h"

/* What t's process is when multiprocessing started it, from its first -c
 * code (CPython's Lib/multiprocessing: spawn.get_command_line,
 * forkserver.connect_to_new_process, resource_tracker.ensure_running):
 * "multiprocessing spawn worker", "multiprocessing forkserver" (its ppid
 * is main_pid, or main_pid is 0), "multiprocessing forkserver worker" (a
 * fork of the forkserver: the same argv, another parent), "multiprocessing
 * resource tracker"; NULL for any other process. */
const char *tl_role_mp(const tl_trace_t *t, uint64_t main_pid);

/* The role of t's process in a run whose main process is main_pid (0:
 * unknown) running main_exe (NULL or "": unknown), the first that holds:
 * "rank N" (the RANK torchrun set: OPTIONS rank), "main" (pid is main_pid),
 * "DataLoader worker N" (a stack ran torch's _worker_loop; N the worker id
 * its provider noted, "DataLoader worker" without one), "pool worker"
 * (multiprocessing.pool's worker or concurrent.futures' _process_worker),
 * one of tl_role_mp's (a -c code of multiprocessing), "child" (the main
 * program: t's exe is main_exe), else "helper". Into buf of n (about 24
 * bytes); returns buf. */
const char *tl_role_of(const tl_trace_t *t, uint64_t main_pid, const char *main_exe, char *buf,
                       size_t n);

/* "python3 work.py --fast": t's program and arguments by their base names
 * (a -c code, or an argument with a space, as it is, cut to 60 bytes),
 * about 80 bytes in all; "python3 [multiprocessing forkserver worker]" for
 * multiprocessing's own processes (tl_role_mp); the executable when the
 * trace has no argv. Into buf of n; returns buf. Raw trace bytes: the
 * caller escapes. */
const char *tl_role_program(const tl_trace_t *t, uint64_t main_pid, char *buf, size_t n);

/* How t's process ended, into buf of n (about 24 bytes): "exit N", "exit",
 * "signal N", "exec" from its END record; without one, "running" when its
 * process still wrote the trace as it was read (tl_trace_t.running: a
 * child that outlived `run`'s command), else "no end (killed?)". */
void tl_role_end(const tl_trace_t *t, char *buf, size_t n);

#endif
