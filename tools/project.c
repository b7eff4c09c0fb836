/* project.c - which programs of a run check judges (project.h). */
#include "config.h"
#include "tools/project.h"
#include "report/pipeline.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether the directory dir (len bytes of it) is a Python environment or
 * package: its last component site-packages or dist-packages, or a
 * pyvenv.cfg or conda-meta in it. */
static bool python_env(const char *dir, size_t len)
{
    const char *base = dir + len;
    while (base > dir && base[-1] != '/')
        base--;
    size_t bl = (size_t)(dir + len - base);
    if ((bl == 13 && !strncmp(base, "site-packages", 13)) ||
        (bl == 13 && !strncmp(base, "dist-packages", 13)))
        return true;
    char p[PATH_MAX];
    static const char *const marks[] = {"pyvenv.cfg", "conda-meta"};
    for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
        int k = snprintf(p, sizeof p, "%.*s/%s", (int)len, dir, marks[i]);
        if (k > 0 && (size_t)k < sizeof p && access(p, F_OK) == 0) return true;
    }
    return false;
}

bool tl_project_third_party(const char *exe)
{
    static const char *const kits[] = {"/usr/local/cuda", "/opt/cuda", "/opt/rocm", "/opt/nvidia"};
    for (size_t i = 0; i < sizeof kits / sizeof kits[0]; i++)
        if (!strncmp(exe, kits[i], strlen(kits[i]))) return true;
    const char *last = strrchr(exe, '/');
    for (const char *s = exe[0] == '/' ? strchr(exe + 1, '/') : NULL; s && s <= last;
         s = strchr(s + 1, '/'))
        if (python_env(exe, (size_t)(s - exe))) return true;
    return false;
}

/* The length of the project's root in cwd (n bytes, no trailing slash):
 * the nearest directory from cwd up that holds a .git (a repository, a
 * worktree, a submodule), else cwd itself; never "/". */
static size_t project_root(const char *cwd, size_t n)
{
    char p[PATH_MAX];
    for (size_t k = n; k > 1; k--) {
        if (k < n && cwd[k] != '/') continue;
        int w = snprintf(p, sizeof p, "%.*s/.git", (int)k, cwd);
        if (w > 0 && (size_t)w < sizeof p && access(p, F_OK) == 0) return k;
    }
    return n;
}

/* Whether path lies under the project's root found from cwd (project.h). */
static bool under_root(const char *path, const char *cwd)
{
    size_t n = strlen(cwd);
    while (n > 1 && cwd[n - 1] == '/')
        n--;
    if (n <= 1 || cwd[0] != '/') return false;
    n = project_root(cwd, n);
    return !strncmp(path, cwd, n) && path[n] == '/';
}

bool tl_project_program(const char *exe, const char *cwd)
{
    return under_root(exe, cwd) && !tl_project_third_party(exe);
}

/* Blocks of this many bytes or more are recorded in every mode (the agent's
 * TL_CONFIG_BIG_MIN): a helper that made one is not "nothing of interest". */
#define BIG_BLOCK 65536u

/* A program of the system: its executable under /usr/bin, /bin, /usr/sbin,
 * /sbin, /usr/libexec or /usr/lib, /lib (Debian's bash, perl, git, gcc and
 * its cc1plus, ldconfig; not /usr/local) or, with third_party, a third
 * party's tool (project.h: a GPU toolkit's, a Python environment's), and
 * not a Python interpreter. Its blocks are the tool's, never the
 * program's, however many or big:
 * bash leaves definitely lost blocks at every exit, perl and gcc free
 * little by design (a pyenv shim's pyenv-which, torch.compile's g++). */
static bool system_tool(const tl_trace_info_t *info, bool third_party)
{
    static const char *const dirs[] = {"/usr/bin/",     "/bin/",     "/usr/sbin/", "/sbin/",
                                       "/usr/libexec/", "/usr/lib/", "/lib/"};
    if (!info->has_process) return false;
    const char *base = strrchr(info->exe, '/');
    if (!base || !strncmp(base + 1, "python", 6)) return false;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (!strncmp(info->exe, dirs[i], strlen(dirs[i]))) return true;
    return third_party && tl_project_third_party(info->exe); /* nvcc, triton's ptxas */
}

bool tl_project_tool(const tl_trace_info_t *info)
{
    return system_tool(info, true);
}

/* Whether a directory of the absolute path exe is one of pytest's base
 * temporary directories, "pytest-of-<user>" (pytest's tmp_path and
 * tmpdir live under {temp}/pytest-of-<user>/pytest-<N>/): a binary a test
 * built into its tmp_path. */
static bool pytest_tmp(const char *exe)
{
    for (const char *s = strchr(exe, '/'); s; s = strchr(s + 1, '/'))
        if (!strncmp(s + 1, "pytest-of-", 10) && strchr(s + 1, '/')) return true;
    return false;
}

/* The program as its parent named it: argv0 (with a '/') made absolute
 * against the process's working directory and its "." and ".." taken out
 * without following symbolic links, into buf (len bytes); false when
 * argv0 names no path or it does not fit. bazel-bin/pkg/test stays under
 * the project where its executable's real path is in bazel's cache. */
static bool invoked_path(const tl_trace_info_t *info, char *buf, size_t len)
{
    char joined[2 * TL_TRACE_INFO_STR];
    if (!strchr(info->argv0, '/')) return false;
    if (info->argv0[0] == '/')
        snprintf(joined, sizeof joined, "%s", info->argv0);
    else if (info->cwd[0] == '/')
        snprintf(joined, sizeof joined, "%s/%s", info->cwd, info->argv0);
    else
        return false;
    size_t n = 0;
    for (char *save = NULL, *c = strtok_r(joined, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (!strcmp(c, ".")) continue;
        if (!strcmp(c, "..")) {
            while (n > 0 && buf[--n] != '/')
                ;
            continue;
        }
        size_t cl = strlen(c);
        if (n + 1 + cl + 1 > len) return false;
        buf[n++] = '/';
        memcpy(buf + n, c, cl);
        n += cl;
    }
    buf[n] = '\0';
    return n > 0;
}

bool tl_project_own(const tl_trace_info_t *info, const tl_trace_info_t *main)
{
    if (!info->has_process || system_tool(info, false) || tl_project_third_party(info->exe))
        return false;
    char as_named[TL_TRACE_INFO_STR];
    /* exe is no third party's (above); the path it was run by may lead
     * through a Python environment under the root (tl_project_program) */
    return under_root(info->exe, main->cwd) || pytest_tmp(info->exe) ||
           (invoked_path(info, as_named, sizeof as_named) &&
            tl_project_program(as_named, main->cwd));
}

/* project.h. Such traces use a few chunks (the header says how many):
 * bigger ones are not even read. Read through the pipeline, like every
 * trace (pipeline.h). */
bool tl_project_quiet(const char *path)
{
    tl_trace_info_t info;
    if (tl_trace_peek(path, &info) != TL_STATUS_OK || !info.clean_end) return false;
    if (system_tool(&info, true)) return true;
    if (info.chunk_count > 4) return false;
    tl_analysis_t *a = malloc(sizeof *a);
    char why[256];
    if (!a) return false;
    if (tl_analysis_run(a, path, NULL, why, sizeof why) != TL_STATUS_OK) {
        free(a);
        return false;
    }
    const tl_trace_t *t = &a->trace;
    const tl_model_t *m = &a->model;
    /* storage is a record kind on an ALLOC only; on a RALLOC it says the old
     * pointer's RFREE came first (reader.h), and every realloc of a shell is
     * recorded under check (TENSORLEAK_MODE=all) */
    bool nothing = t->has_end && (t->end_reason == TL_END_EXIT || t->end_reason == TL_END_EXEC) &&
                   !t->truncated && !t->bad_chunks && !t->bad_records && t->end_storages == 0 &&
                   t->end_dropped == 0 && t->nlineage == 0 && m->storages == 0 &&
                   m->largest_exact < BIG_BLOCK;
    tl_analysis_free(a);
    free(a);
    return nothing;
}

bool tl_project_before_exec(uint64_t first_start, bool first_tool, uint64_t ppid, uint64_t main_pid,
                            uint64_t main_start)
{
    return first_start < main_start || (ppid == main_pid && first_tool);
}
