/* frames.c - the frame filter (see frames.h): allocator modules, the
 * program's own frames, library names for folded frames. */
#include "report/analyze/frames.h"

#include <stdio.h>
#include <string.h>

const char *tl_path_base(const char *path)
{
    const char *b = path ? strrchr(path, '/') : NULL;
    return b ? b + 1 : path ? path : "";
}

static bool has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

bool tl_allocator_module(const char *path, unsigned mask)
{
    if (!path) return false;
    const char *b = tl_path_base(path);
    if ((mask & TL_ALLOC_AGENT) && (has_prefix(b, "libtensorleak") || has_prefix(b, "libjemalloc")))
        return true;
    if ((mask & TL_ALLOC_LIBC) &&
        (has_prefix(b, "libc.so") || has_prefix(b, "libc-") || has_prefix(b, "ld-linux")))
        return true;
    return (mask & TL_ALLOC_CXX) && has_prefix(b, "libstdc++");
}

bool tl_frame_own_python_file(const char *file)
{
    const char *b = strrchr(file, '/');
    return b && b - file >= 11 && strncmp(b - 11, "/tensorleak", 11) == 0 && b[1] == '_';
}

bool tl_frame_library_python_file(const char *file)
{
    return file[0] == '<' || strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
           strstr(file, "/lib/python3.") || tl_frame_own_python_file(file);
}

bool tl_frame_interpreter_module(const char *path)
{
    if (!path) return false;
    const char *b = tl_path_base(path);
    return has_prefix(b, "python") || has_prefix(b, "libpython");
}

bool tl_frame_start_function(const char *function)
{
    return function && (!strcmp(function, "_start") || has_prefix(function, "__libc_start"));
}

bool tl_frame_library_module(const char *path, const char *exe)
{
    if (!path || !path[0] || path[0] == '[') return true;
    const char *b = tl_path_base(path);
    if (tl_allocator_module(path, TL_ALLOC_NATIVE | TL_ALLOC_CXX) ||
        tl_frame_interpreter_module(path))
        return true;
    if (exe && exe[0] && (!strcmp(path, exe) || !strcmp(b, tl_path_base(exe)))) return false;
    static const char *const dirs[] = {"/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/",
                                       "/usr/local/lib/"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++)
        if (has_prefix(path, dirs[i])) return true;
    return strstr(path, "/site-packages/") || strstr(path, "/dist-packages/");
}

/* The first path component after marker in file, or NULL. */
static const char *after(const char *file, const char *marker, size_t *len)
{
    const char *p = strstr(file, marker);
    if (!p) return NULL;
    p += strlen(marker);
    size_t k = strcspn(p, "/");
    if (k > 3 && !strncmp(p + k - 3, ".py", 3) && p[k] == '\0') k -= 3; /* a top-level module */
    *len = k;
    return k ? p : NULL;
}

const char *tl_frame_library_name(const char *module, const char *python_file, char *buf, size_t n)
{
    const char *name = "unknown", *p;
    size_t len = 0; /* 0: all of name */
    if (python_file) {
        if (python_file[0] == '<')
            name = strstr(python_file, "importlib") ? "importlib" : "frozen";
        else if (tl_frame_own_python_file(python_file))
            name = "tensorleak";
        else if ((p = after(python_file, "/site-packages/", &len)) ||
                 (p = after(python_file, "/dist-packages/", &len)))
            name = p;
        else if (strstr(python_file, "/lib/python3."))
            name = "stdlib";
        else
            name = tl_path_base(python_file);
    } else if (module && module[0]) {
        name = tl_path_base(module);
        const char *so = strstr(name, ".so");
        if (so && so > name) len = (size_t)(so - name);
    }
    snprintf(buf, n, "%.*s", (int)(len ? len : strlen(name)), name);
    return buf;
}
