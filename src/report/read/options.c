/* options.c - the OPTIONS keys the reader keeps (options.h). */
#include "report/read/options.h"

#include <stdbool.h>
#include <string.h>

/* Copies an untrusted string into buf[cap]: cut, anything but printable
 * ASCII as '?'. */
static void copy_printable(char *buf, size_t cap, tl_bytes_t b)
{
    size_t n = b.n < cap - 1 ? b.n : cap - 1;
    for (size_t i = 0; i < n; i++)
        buf[i] = b.p[i] >= 0x20 && b.p[i] < 0x7f ? (char)b.p[i] : '?';
    buf[n] = '\0';
}

/* A decimal OPTIONS value (a rank), else -1. */
static int64_t option_number(tl_bytes_t v)
{
    int64_t x = 0;
    if (!v.n || v.n > 9) return -1;
    for (size_t i = 0; i < v.n; i++) {
        if (v.p[i] < '0' || v.p[i] > '9') return -1;
        x = x * 10 + (v.p[i] - '0');
    }
    return x;
}

static bool key_is(tl_bytes_t k, const char *name)
{
    return k.n == strlen(name) && memcmp(k.p, name, k.n) == 0;
}

void tl_reader_options(tl_trace_t *t, const tl_record_t *rec)
{
    uint64_t n = rec->u.options.count < TL_REC_MAX_OPTS ? rec->u.options.count : TL_REC_MAX_OPTS;
    for (uint64_t i = 0; i < n; i++) {
        tl_bytes_t k = rec->u.options.key[i], v = rec->u.options.value[i];
        if (key_is(k, "host"))
            copy_printable(t->host, sizeof t->host, v);
        else if (key_is(k, "rank"))
            t->rank = option_number(v);
        else if (key_is(k, "local_rank"))
            t->local_rank = option_number(v);
        else if (key_is(k, "world_size"))
            t->world_size = option_number(v);
        else if (k.n == 13 && memcmp(k.p, "python_frames", 13) == 0) {
            t->python_unsupported = v.n == 11 && memcmp(v.p, "unsupported", 11) == 0;
            t->python_frames_off = v.n == 3 && memcmp(v.p, "off", 3) == 0;
        } else if (k.n == 6 && memcmp(k.p, "python", 6) == 0)
            copy_printable(t->python, sizeof t->python, v);
        else if (k.n == 12 && memcmp(k.p, "python_build", 12) == 0)
            copy_printable(t->python_build, sizeof t->python_build, v);
    }
}
