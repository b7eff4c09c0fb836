/* status.c - the report library's message lines (see status.h). */
#include "report/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_msgs_add(tl_msgs_t *m, const char *fmt, ...)
{
    if (!m) return;
    if (m->n == TL_MSGS_MAX) {
        m->lost++;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *line = k < 0 ? NULL : malloc((size_t)k + 1);
    if (!line) {
        m->lost++;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(line, (size_t)k + 1, fmt, ap);
    va_end(ap);
    m->line[m->n++] = line;
}

void tl_msgs_free(tl_msgs_t *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->line[i]);
    memset(m, 0, sizeof *m);
}
