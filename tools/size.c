/* size.c - byte sizes on the command line (see size.h). */
#include "tools/size.h"

#include <ctype.h>
#include <math.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *name;
    double mult;
} units[] = {
    {"", 1},
    {"b", 1},
    {"k", 1024.0},
    {"kb", 1e3},
    {"kib", 1024.0},
    {"m", 1048576.0},
    {"mb", 1e6},
    {"mib", 1048576.0},
    {"g", 1073741824.0},
    {"gb", 1e9},
    {"gib", 1073741824.0},
    {"t", 1099511627776.0},
    {"tb", 1e12},
    {"tib", 1099511627776.0},
};

/* Reads "digits[.digits]" into *v; returns the end, or NULL if no digit. */
static const char *parse_decimal(const char *s, double *v)
{
    double x = 0;
    int digits = 0;
    while (isdigit((unsigned char)*s)) {
        x = x * 10 + (*s++ - '0');
        digits++;
    }
    if (*s == '.') {
        s++;
        double scale = 0.1;
        while (isdigit((unsigned char)*s)) {
            x += (*s++ - '0') * scale;
            scale /= 10;
            digits++;
        }
    }
    if (!digits) return NULL;
    *v = x;
    return s;
}

bool tl_parse_size(const char *s, uint64_t *out)
{
    if (!s) return false;
    double v;
    const char *p = parse_decimal(s, &v);
    if (!p) return false;
    while (*p == ' ')
        p++;
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcasecmp(p, units[i].name) == 0) {
            /* "1.5" or "1.5B" names no whole number of bytes: a typo for
             * 1.5 of some unit, not a limit of 2 B. */
            if (units[i].mult == 1 && v != floor(v)) return false;
            double bytes = round(v * units[i].mult);
            if (!(bytes < 9223372036854775808.0)) return false;
            *out = (uint64_t)bytes;
            return true;
        }
    }
    return false;
}

bool tl_parse_size_or_percent(const char *s, uint64_t *bytes, double *percent, bool *is_percent)
{
    size_t n = s ? strlen(s) : 0;
    if (n > 1 && s[n - 1] == '%') {
        double v;
        const char *p = parse_decimal(s, &v);
        if (!p || p != s + n - 1 || v > 1e6) return false;
        *percent = v;
        *is_percent = true;
        return true;
    }
    if (!tl_parse_size(s, bytes)) return false;
    *is_percent = false;
    return true;
}
