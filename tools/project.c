/* project.c - a run's own programs (project.h). */
#include "config.h"
#include "tools/project.h"

#include <limits.h>
#include <stdio.h>
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

bool tl_project_program(const char *exe, const char *cwd)
{
    size_t n = strlen(cwd);
    while (n > 1 && cwd[n - 1] == '/')
        n--;
    if (n <= 1 || cwd[0] != '/') return false;
    n = project_root(cwd, n);
    return !strncmp(exe, cwd, n) && exe[n] == '/' && !tl_project_third_party(exe);
}
