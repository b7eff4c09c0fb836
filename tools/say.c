/* say.c - the CLI's stderr lines and exit statuses (see say.h). */
#include "tools/say.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "report/progress.h"
#include "report/render/escape.h"
#include "tools/exit_codes.h"

void tl_say_progress(bool quiet)
{
    if (!quiet && isatty(STDERR_FILENO)) tl_progress_enable(STDERR_FILENO);
}

void tl_say(const char *fmt, ...)
{
    char small[1024], *line = small;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (k < 0) return;
    if ((size_t)k >= sizeof small && (line = malloc((size_t)k + 1))) {
        va_start(ap, fmt);
        vsnprintf(line, (size_t)k + 1, fmt, ap);
        va_end(ap);
    }
    size_t len = line ? (size_t)k : sizeof small - 1; /* out of memory: the line cut */
    fputs("tensorleak: ", stderr);
    tl_esc_write(stderr, line ? line : small, len, false);
    fputc('\n', stderr);
    if (line != small) free(line);
}

void tl_say_msgs(tl_msgs_t *m)
{
    for (size_t i = 0; i < m->n; i++)
        tl_say("%s", m->line[i]);
    if (m->lost)
        tl_say("%zu more message%s not shown (more than %d, or out of memory)", m->lost,
               m->lost == 1 ? "" : "s", TL_MSGS_MAX);
    tl_msgs_free(m);
}

int tl_cli_exit(tl_status_t s)
{
    switch (s) {
    case TL_STATUS_OK:
        return TL_EXIT_OK;
    case TL_STATUS_NOMEM:
        return TL_EXIT_FAILURE;
    case TL_STATUS_NO_TRACE:
        return TL_EXIT_NO_TRACE;
    case TL_STATUS_BAD_TRACE:
        return TL_EXIT_BAD_TRACE;
    case TL_STATUS_INCOMPLETE:
        return TL_EXIT_TRUNCATED;
    case TL_STATUS_OUTPUT:
        return TL_EXIT_OUTPUT;
    case TL_STATUS_BAD_INPUT:
        return TL_EXIT_USAGE;
    }
    return TL_EXIT_FAILURE;
}
