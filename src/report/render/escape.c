/* escape.c - escaping of control characters for text output (see escape.h).
 *
 * Works on bytes: a UTF-8 sequence is checked whole (no overlong forms, no
 * surrogates, nothing above U+10FFFF) and passes as it is unless it encodes
 * a C1 control; a byte that starts no valid sequence is escaped alone.
 */
#include "report/render/escape.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Length of the valid UTF-8 sequence at s[0, n) that starts with a byte
 * >= 0x80, or 0 when there is none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t min, cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, min = 0x80, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, min = 0x800, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, min = 0x10000, cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
    if (cp >= 0x80 && cp <= 0x9f) return 0; /* a C1 control: escaped byte by byte */
    return len;
}

/* How many bytes of s[0, n) pass through unchanged from the start (a run),
 * or 0 when s[0] must be escaped. */
static size_t plain_run(const unsigned char *s, size_t n, bool keep_newlines)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c < 0x80) {
            if ((c < 0x20 && !(keep_newlines && c == '\n')) || c == 0x7f) break;
            i++;
            continue;
        }
        size_t k = utf8_len(s + i, n - i);
        if (!k) break;
        i += k;
    }
    return i;
}

void tl_esc_write(FILE *out, const char *str, size_t n, bool keep_newlines)
{
    const unsigned char *s = (const unsigned char *)str;
    while (n) {
        size_t k = plain_run(s, n, keep_newlines);
        if (k) {
            fwrite(s, 1, k, out);
        } else {
            fprintf(out, "\\x%02x", s[0]);
            k = 1;
        }
        s += k;
        n -= k;
    }
}

void tl_esc_puts(FILE *out, const char *s)
{
    if (s) tl_esc_write(out, s, strlen(s), false);
}

const char *tl_esc(const char *str, char *buf, size_t n)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t len = strlen((const char *)s), o = 0;
    while (len) {
        size_t k = plain_run(s, len, false);
        if (k) {
            size_t take = k < n - 1 - o ? k : n - 1 - o;
            while (take < k && take && (s[take] & 0xc0) == 0x80) /* not inside a character */
                take--;
            memcpy(buf + o, s, take);
            o += take;
            if (take < k) break;
        } else {
            if (o + 4 > n - 1) break;
            snprintf(buf + o, 5, "\\x%02x", s[0]);
            o += 4;
            k = 1;
        }
        s += k;
        len -= k;
    }
    buf[o] = '\0';
    return buf;
}
