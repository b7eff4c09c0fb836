/* project.h - which programs of a run check judges: the project's own
 * (those built in its project), the system's and third parties' tools, the
 * helpers with nothing of interest, and an exec launcher's programs
 * (launch.h runs the command; cmd_check.c re-checks a kept run alike). */
#ifndef TL_PROJECT_H
#define TL_PROJECT_H

#include <stdbool.h>
#include <stdint.h>

/* Whether the executable at exe (an absolute path: a PROCESS record's) is
 * one of the project's own: under the project's root, the nearest
 * directory from cwd up that holds a .git, else cwd (the run's working
 * directory, its main process's OPTIONS "cwd"; never for "" or "/": a
 * test run from tests/ of a binary in ../build is the project's), and not
 * a third party's tool (tl_project_third_party: a venv's or conda's
 * programs, a package's bundled binaries such as triton's ptxas). check
 * checks such a program whatever it made (a C test binary of 100 B a
 * pytest runs is the program under test), where another helper with
 * nothing of interest is left out (launch.h). The caller leaves the
 * system's own tools out first. Reads the file system (access);
 * thread-safe. */
bool tl_project_program(const char *exe, const char *cwd);

/* Whether the executable at exe (absolute) is a third party's tool: a GPU
 * toolkit's (under /usr/local/cuda*, /opt/cuda, /opt/rocm, /opt/nvidia:
 * nvcc, which torch.utils.cpp_extension runs) or one of a Python
 * environment or package (an ancestor directory named site-packages or
 * dist-packages, or holding a pyvenv.cfg or conda-meta: triton's ptxas,
 * pip's ninja, conda's compilers). Its blocks are the tool's, never the
 * program's, as a system tool's (launch.h). Reads the file system
 * (access); thread-safe. */
bool tl_project_third_party(const char *exe);

/* Whether the trace at path is a helper's that holds nothing of interest
 * (what tl_launch_run removes unless keep_helpers): ended cleanly (exit or
 * exec), and a system tool's (an executable under /usr/bin, /bin,
 * /usr/sbin, /sbin, /usr/libexec, /usr/lib or /lib, not a Python
 * interpreter: not read), or with no storage, no lineage or report-point
 * record, no block of 64 KiB or more. false when it cannot be read. */
bool tl_project_quiet(const char *path);

/* Whether info is a system tool's trace, however it ended (a launcher
 * killed with its program, timeout -s KILL, is one): an executable under
 * /usr/bin, /bin, /usr/sbin, /sbin, /usr/libexec, /usr/lib or /lib
 * (Debian's bash, make, perl, gcc, timeout, env; not /usr/local), or a
 * third party's tool (tl_project_third_party: nvcc, triton's ptxas, a
 * venv's or conda's programs), not a Python interpreter. */
struct tl_trace_info;
bool tl_project_tool(const struct tl_trace_info *info);

/* Whether info is a program of the project's own, by the working
 * directory of the run's main process (main, its trace's): not a system or
 * third party's tool, and its executable under the project's root
 * (tl_project_program), or the path its parent ran it by (argv0 against
 * info's working directory, symbolic links not followed: a bazel-bin
 * symlink into bazel's cache) under the root, or its executable in
 * pytest's temporary directories (a directory pytest-of-<user>: a test's
 * tmp_path). Checked whatever it made: never a helper with nothing of
 * interest. Reads the file system (access); thread-safe. */
bool tl_project_own(const struct tl_trace_info *info, const struct tl_trace_info *main);

/* Whether a program of a run whose command is an exec launcher
 * (launch.h's exec_launcher) was started by the script before it exec'd
 * the main image (main_start, CLOCK_MONOTONIC ns; the command's pid main_pid):
 * its pid's first image started before (first_start), or it is a child of
 * the command's pid (ppid) whose first image is a system tool
 * (first_tool), a fork of the script itself (after the exec, the
 * command's forks are copies of the main program). The second holds
 * where the first races: a background job (`./a & exec ./b`) whose fork
 * started its agent after the script's exec, on a busy machine. Used by
 * check -- CMD and check --trace=DIR alike. */
bool tl_project_before_exec(uint64_t first_start, bool first_tool, uint64_t ppid, uint64_t main_pid,
                            uint64_t main_start);

#endif
