/* site_group.h - a site list grouped by the program's line, as the text
 * report prints it and the JSON report's storage_sites lists it: one group
 * per Python line ("at FILE:LINE"; plain and storage apart), led by its
 * largest site. Not thread-safe (qsort's context is a static).
 */
#ifndef TL_REPORT_SITE_GROUP_H
#define TL_REPORT_SITE_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "report/analyze/suppress.h"
#include "report/render/render.h"

/* The sites of a list grouped by where they are in the program: one entry
 * per Python line ("at FILE:LINE"; and plain/storage), the frames of its
 * largest site. A native "in FUNCTION" names no line: such sites stay alone. */
typedef struct tl_site_entry {
    size_t index; /* into the list */
    char *where;  /* malloc'd; "" when none: the site stays alone */
} tl_site_entry_t;

typedef struct tl_site_group {
    size_t lead, nsites; /* lead: list index of its largest site */
    uint64_t bytes, blocks;
    bool storage;
    const char *where;
} tl_site_group_t;

typedef struct tl_site_list {
    const tl_site_stat_t *s;
    tl_site_entry_t *e;
    tl_site_group_t *g;
    size_t n, ng;
    uint64_t hidden_bytes, hidden_blocks; /* by the suppressions */
    uint64_t hidden_rules;                /* bit i: rule i hid some (rules 0-63) */
} tl_site_list_t;

/* Group s[0, n) into l; suppressed sites (supp) left out and counted.
 * true when out of memory (l is then empty: the caller lists each site
 * alone, unsuppressed). */
bool tl_site_list_build(const tl_report_ctx_t *c, const tl_site_stat_t *s, size_t n,
                        tl_supp_t *supp, tl_site_list_t *l);

/* Frees what tl_site_list_build allocated in l. */
void tl_site_list_free(tl_site_list_t *l);

#endif
