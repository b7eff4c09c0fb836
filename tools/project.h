/* project.h - a run's own programs (those built in its project) and the
 * third parties' tools. */
#ifndef TL_PROJECT_H
#define TL_PROJECT_H

#include <stdbool.h>

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

#endif
