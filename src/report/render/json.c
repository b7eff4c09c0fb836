/* json.c - streaming JSON writer (see json.h).
 *
 * Strings: '"' '\\' and control characters are escaped (\n \t \r \b \f or
 * \u00XX), DEL too for readability, and each byte sequence that is not
 * well-formed UTF-8 (overlong, surrogate, past U+10FFFF, cut) becomes U+FFFD.
 */
#include "report/render/json.h"

#include <inttypes.h>
#include <string.h>

void tl_json_init(tl_json_t *j, FILE *out, bool pretty)
{
    memset(j, 0, sizeof *j);
    j->out = out;
    j->pretty = pretty;
    j->first[0] = true;
}

static void newline(tl_json_t *j)
{
    if (!j->pretty) return;
    fputc('\n', j->out);
    for (unsigned i = 0; i < j->depth; i++)
        fputs("  ", j->out);
}

/* Separator before a value or key at the current depth. */
static void before_item(tl_json_t *j)
{
    if (j->after_key) {
        j->after_key = false;
        return;
    }
    if (!j->first[j->depth]) fputc(',', j->out);
    j->first[j->depth] = false;
    if (j->depth > 0) newline(j);
}

static void open_container(tl_json_t *j, char c)
{
    before_item(j);
    fputc(c, j->out);
    if (j->depth >= TL_JSON_MAX_DEPTH) {
        j->extra++;
        return;
    }
    j->depth++;
    j->first[j->depth] = true;
    j->closer[j->depth] = c == '{' ? '}' : ']';
}

static void close_container(tl_json_t *j, char c)
{
    if (j->extra) {
        j->extra--;
        fputc(c, j->out);
        return;
    }
    if (j->depth == 0) return;
    bool empty = j->first[j->depth];
    j->depth--;
    if (!empty) newline(j);
    fputc(c, j->out);
}

void tl_json_obj_begin(tl_json_t *j)
{
    open_container(j, '{');
}

void tl_json_obj_end(tl_json_t *j)
{
    close_container(j, '}');
}

void tl_json_arr_begin(tl_json_t *j)
{
    open_container(j, '[');
}

void tl_json_arr_end(tl_json_t *j)
{
    close_container(j, ']');
}

void tl_json_key(tl_json_t *j, const char *key)
{
    before_item(j);
    tl_json_write_string(j->out, key, strlen(key));
    fputs(j->pretty ? ": " : ":", j->out);
    j->after_key = true;
}

/* Length of the well-formed UTF-8 sequence at s[0, n), or 0 if there is none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t cp, min;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
        min = 0x10000;
    } else {
        return 0;
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    return len;
}

void tl_json_write_string(FILE *out, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        switch (c) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\b':
            fputs("\\b", out);
            break;
        case '\f':
            fputs("\\f", out);
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                fprintf(out, "\\u%04x", c);
            } else if (c < 0x80) {
                fputc(c, out);
            } else {
                size_t len = utf8_len(s + i, n - i);
                if (len == 0) {
                    fputs("\xef\xbf\xbd", out); /* U+FFFD for one bad byte */
                    i++;
                    continue;
                }
                fwrite(s + i, 1, len, out);
                i += len;
                continue;
            }
        }
        i++;
    }
    fputc('"', out);
}

void tl_json_strn(tl_json_t *j, const char *s, size_t n)
{
    before_item(j);
    if (!s)
        fputs("null", j->out);
    else
        tl_json_write_string(j->out, s, n);
}

void tl_json_str(tl_json_t *j, const char *s)
{
    tl_json_strn(j, s, s ? strlen(s) : 0);
}

void tl_json_u64(tl_json_t *j, uint64_t v)
{
    before_item(j);
    fprintf(j->out, "%" PRIu64, v);
}

void tl_json_double(tl_json_t *j, double v)
{
    before_item(j);
    if (v != v || v > 1e308 || v < -1e308)
        fputs("null", j->out); /* JSON has no NaN or infinity */
    else
        fprintf(j->out, "%.17g", v);
}

void tl_json_i64(tl_json_t *j, int64_t v)
{
    before_item(j);
    fprintf(j->out, "%" PRId64, v);
}

void tl_json_bool(tl_json_t *j, bool v)
{
    before_item(j);
    fputs(v ? "true" : "false", j->out);
}

void tl_json_null(tl_json_t *j)
{
    before_item(j);
    fputs("null", j->out);
}

void tl_json_raw(tl_json_t *j, const char *text, size_t n)
{
    before_item(j);
    while (n && (text[n - 1] == '\n' || text[n - 1] == ' '))
        n--;
    for (size_t i = 0; i < n; i++) {
        fputc(text[i], j->out);
        /* a newline outside strings (JSON escapes those inside): indent */
        for (unsigned d = 0; text[i] == '\n' && j->pretty && d < j->depth; d++)
            fputs("  ", j->out);
    }
}

void tl_json_finish(tl_json_t *j)
{
    while (j->extra)
        close_container(j, '}');
    while (j->depth > 0)
        close_container(j, j->closer[j->depth]);
    fputc('\n', j->out);
}
