/* follow.c - the run's environment for the images a traced process execs
 * (follow.h). No allocation, no lock, no libc call that may take one: these
 * run in vfork children.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/follow.h"

#include <dlfcn.h>
#include <string.h>
#include <sys/auxv.h>

#include "agent/config.h"

tl_follow_t tl_follow;

static const char preload_name[] = "LD_PRELOAD=";
#define PRELOAD_NAME_LEN (sizeof preload_name - 1)
static const char seq_name[] = TL_CONFIG_EXEC_SEQ_ENV "=";

static bool has_prefix(const char *s, const char *prefix, size_t n)
{
    return strncmp(s, prefix, n) == 0;
}

/* Whether the list (ld.so's LD_PRELOAD: entries split at ' ' and ':') has
 * an entry equal to path. */
static bool list_has(const char *list, const char *path)
{
    size_t n = strlen(path);
    for (const char *p = list; *p;) {
        size_t len = strcspn(p, " :");
        if (len == n && memcmp(p, path, n) == 0) return true;
        p += len;
        if (*p) p++;
    }
    return false;
}

/* The first entry of envp that starts with "NAME=" (name given with its
 * '='), or NULL. */
static const char *env_find(char *const envp[], const char *name, size_t n)
{
    for (size_t i = 0; envp && envp[i]; i++)
        if (has_prefix(envp[i], name, n)) return envp[i];
    return NULL;
}

/* Copies s (n bytes and a NUL) to *at in f->store; NULL when it does not fit. */
static const char *keep(tl_follow_t *f, size_t *at, const char *s, size_t n)
{
    if (n + 1 > sizeof f->store - *at) return NULL;
    char *d = f->store + *at;
    memcpy(d, s, n);
    d[n] = '\0';
    *at += n + 1;
    return d;
}

/* The variables `run` and `check` set (tools/launch.c, tools/cmd_check.c):
 * kept first, whatever else the environment holds. */
static bool of_the_run(const char *e)
{
    static const char *const names[] = {
        "OUTPUT=", "SESSION=", "MODE=", "LEAK_SCAN=", "PYTHON_DIR=", "CHECK_"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (has_prefix(e + 11, names[i], strlen(names[i]))) return true;
    return false;
}

void tl_follow_take(tl_follow_t *f, const char *const envp[], const char *self)
{
    memset(f, 0, sizeof *f);
    const char *pre = env_find((char *const *)envp, preload_name, PRELOAD_NAME_LEN);
    if (!self || !*self || !pre || !list_has(pre + PRELOAD_NAME_LEN, self)) return;
    size_t at = 0, n = strlen(self);
    char line[PRELOAD_NAME_LEN + 4096];
    if (n >= sizeof line - PRELOAD_NAME_LEN) return;
    memcpy(line, preload_name, PRELOAD_NAME_LEN);
    memcpy(line + PRELOAD_NAME_LEN, self, n);
    f->preload = keep(f, &at, line, PRELOAD_NAME_LEN + n);
    if (!f->preload) return;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; envp[i] && f->nvars < TL_FOLLOW_VARS_MAX; i++) {
            const char *e = envp[i];
            if (!has_prefix(e, "TENSORLEAK_", 11) || !strchr(e, '=') ||
                has_prefix(e, seq_name, sizeof seq_name - 1) || of_the_run(e) != (pass == 0))
                continue;
            const char *k = keep(f, &at, e, strlen(e));
            if (k) f->vars[f->nvars++] = k;
        }
}

void tl_follow_init(void)
{
    if (getauxval(AT_SECURE)) return;
    Dl_info info;
    if (!dladdr((void *)&tl_follow_init, &info)) return;
    extern char **environ;
    tl_follow_take(&tl_follow, (const char *const *)environ, info.dli_fname);
}

/* Whether envp has var's name ("NAME=", var's text up to its '='). */
static bool env_has_name(char *const envp[], const char *var)
{
    return env_find(envp, var, (size_t)(strchr(var, '=') - var) + 1) != NULL;
}

/* Whether envp's first LD_PRELOAD, pre (NULL: none), leaves room for f's
 * agent: none, or a blank one (separators alone). The program's own list
 * stands: a sanitizer's runtime must come first, another allocator is its
 * choice. */
static bool preload_wanted(const tl_follow_t *f, const char *pre)
{
    return f->preload && (!pre || !pre[PRELOAD_NAME_LEN + strspn(pre + PRELOAD_NAME_LEN, " :")]);
}

bool tl_follow_need(const tl_follow_t *f, char *const envp[], const char *seq, size_t *entries)
{
    size_t n = 0;
    while (envp && envp[n])
        n++;
    const char *pre = env_find(envp, preload_name, PRELOAD_NAME_LEN);
    bool need = seq != NULL || preload_wanted(f, pre);
    for (size_t i = 0; i < f->nvars && !need; i++)
        need = !env_has_name(envp, f->vars[i]);
    if (!need) return false;
    *entries = n + f->nvars + 3; /* LD_PRELOAD, seq, NULL */
    return true;
}

char **tl_follow_envp(const tl_follow_t *f, char *const envp[], const char *seq, char **out)
{
    const char *pre = env_find(envp, preload_name, PRELOAD_NAME_LEN);
    bool wanted = preload_wanted(f, pre);
    size_t k = 0;
    for (size_t i = 0; envp && envp[i]; i++) {
        char *e = envp[i];
        if (seq && has_prefix(e, seq_name, sizeof seq_name - 1)) continue;
        out[k++] = wanted && e == pre ? (char *)f->preload : e;
    }
    if (wanted && !pre) out[k++] = (char *)f->preload;
    for (size_t i = 0; i < f->nvars; i++)
        if (!env_has_name(envp, f->vars[i])) out[k++] = (char *)f->vars[i];
    if (seq) out[k++] = (char *)seq;
    out[k] = NULL;
    return out;
}
