/* options.c - check's limits and options as the CLI gives them
 * (check.h): the limits' names, the lists of leak and problem kinds, and
 * which recording mode the limits need. Pure functions, no allocation.
 */
#include "report/check/check.h"

#include <string.h>

#include "report/analyze/lineage.h"

const char *tl_check_limit_name(unsigned limit)
{
    static const char *const names[] = {
        "max-leak",   "max-leak-storage",       "max-pinned",         "max-peak",
        "max-growth", "max-growth-vs-baseline", "max-problem-storage"};
    return limit < TL_LIMIT_COUNT ? names[limit] : "unknown";
}

bool tl_check_needs_every_block(const tl_check_opts_t *o)
{
    if (o->device > 1) return false; /* 1 = the cpu, 2 = cuda:0, ... */
    return o->set[TL_LIMIT_LEAK] || o->set[TL_LIMIT_PEAK] || o->set[TL_LIMIT_GROWTH] ||
           o->set[TL_LIMIT_BASELINE];
}

bool tl_check_leak_kinds_parse(const char *v, unsigned *mask)
{
    static const char *const names[] = {"reachable", "definite", "indirect", "possible"};
    *mask = 0;
    if (!v || !*v) return true;
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ",");
        bool known = false;
        if (n == 3 && !strncmp(p, "all", 3)) {
            *mask |= 15u;
            known = true;
        }
        for (unsigned k = 0; k < 4 && !known; k++)
            if (strlen(names[k]) == n && !strncmp(p, names[k], n)) {
                *mask |= 1u << k;
                known = true;
            }
        if (!known) return true;
        p += n;
        if (*p == ',' && !*++p) return true;
    }
    return false;
}

bool tl_check_problem_kinds_parse(const char *v, unsigned *mask)
{
    *mask = 0;
    if (!v || !*v) return true;
    for (const char *p = v; *p;) {
        size_t n = strcspn(p, ",");
        int k = tl_problem_kind_of_name(p, n);
        if (n == 3 && !strncmp(p, "all", 3))
            *mask |= TL_CHECK_PROBLEM_KINDS_ALL;
        else if (k < 0)
            return true;
        else
            *mask |= 1u << k;
        p += n;
        if (*p == ',' && !*++p) return true;
    }
    return false;
}
