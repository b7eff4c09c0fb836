/* args.c - option parsing shared by the subcommands (see args.h). */
#include "tools/args.h"

#include <string.h>

const char *tl_opt_value(int argc, char **argv, int *i, const char *name, bool *matched)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    *matched = false;
    if (strncmp(a, name, n) != 0) return NULL;
    if (a[n] == '=') {
        *matched = true;
        return a + n + 1;
    }
    if (a[n] == '\0') {
        *matched = true;
        if (*i + 1 < argc) return argv[++*i];
    }
    return NULL;
}

bool tl_parse_uint(const char *s, unsigned long max, unsigned long *out)
{
    if (!s || !*s) return false;
    unsigned long v = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return false;
        v = v * 10 + (unsigned long)(*p - '0');
        if (v > max) return false;
    }
    *out = v;
    return true;
}
