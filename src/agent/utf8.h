/* utf8.h - one Unicode code point as UTF-8, for names read from CPython's
 * strings (pyframes.c). No allocation, no locale: async-signal-safe. */
#ifndef TL_AGENT_UTF8_H
#define TL_AGENT_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Writes c as UTF-8 into buf (room for 4 bytes); a surrogate (a lone one in
 * a surrogateescape'd file name) or a value beyond U+10FFFF as U+FFFD.
 * Returns the bytes written (1-4). */
static inline size_t tl_utf8_put(uint32_t c, char *buf)
{
    if ((c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff) c = 0xfffd;
    if (c < 0x80) {
        buf[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        buf[0] = (char)(0xc0 | (c >> 6));
        buf[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c < 0x10000) {
        buf[0] = (char)(0xe0 | (c >> 12));
        buf[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        buf[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    buf[0] = (char)(0xf0 | (c >> 18));
    buf[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    buf[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    buf[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

#endif
