/* progress.c - the progress line of a long read (see progress.h). Writes
 * with write(2) only, to the descriptor the CLI chose; never to stdout.
 */
#include "report/progress.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "report/analyze/size_text.h"

#define REDRAW_NS     100000000ull /* at most 10 lines a second */
#define RATE_AFTER_NS 200000000ull
#define MIN_STEP      ((uint64_t)256 << 10) /* bytes between two clock reads, at least */

tl_progress_t tl_progress_g = {.next = UINT64_MAX};

static struct {
    int fd;            /* -1: off */
    const char *phase; /* NULL: no pass */
    uint64_t start_ns, drawn_ns;
    size_t drawn_len; /* characters on the terminal's line now, after the \r */
    size_t cols;      /* the terminal's width when enabled: a longer line would wrap,
                       * and \r would go back to its last row only */
} g = {.fd = -1, .cols = 80};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put(const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(g.fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return; /* a progress line is never worth an error */
        s += w;
        n -= (size_t)w;
    }
}

/* "\r", the line, spaces over what is left of a longer line before. */
static void draw(uint64_t now)
{
    char line[256];
    size_t len = (size_t)snprintf(line, sizeof line, "\rtensorleak: ");
    len += tl_progress_format(line + len, sizeof line - len, g.phase, tl_progress_g.done,
                              tl_progress_g.total, now - g.start_ns);
    if (len > sizeof line - 1) len = sizeof line - 1;
    if (len > g.cols) len = g.cols; /* \r and cols - 1 characters */
    size_t shown = len - 1, pad = g.drawn_len > shown ? g.drawn_len - shown : 0;
    if (pad > sizeof line - 1 - len) pad = sizeof line - 1 - len;
    memset(line + len, ' ', pad);
    put(line, len + pad);
    g.drawn_len = shown + pad;
    g.drawn_ns = now;
}

/* Bytes between two clock reads: 0.5% of total, at least MIN_STEP. */
static uint64_t step_of(uint64_t total)
{
    return total / 200 > MIN_STEP ? total / 200 : MIN_STEP;
}

void tl_progress_enable(int fd)
{
    g.fd = fd;
    struct winsize ws;
    if (fd >= 0 && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 2) g.cols = ws.ws_col;
}

void tl_progress_begin(const char *phase, uint64_t total)
{
    tl_progress_g = (tl_progress_t){.total = total, .next = UINT64_MAX};
    if (g.fd < 0) return;
    g.phase = phase;
    g.start_ns = now_ns();
    if (g.start_ns - g.drawn_ns >= REDRAW_NS) draw(g.start_ns); /* many small traces: not all */
    tl_progress_g.next = step_of(total);
}

void tl_progress_tick(void)
{
    if (g.fd < 0 || !g.phase) {
        tl_progress_g.next = UINT64_MAX;
        return;
    }
    uint64_t now = now_ns();
    if (now - g.drawn_ns >= REDRAW_NS) draw(now);
    tl_progress_g.next = tl_progress_g.done + step_of(tl_progress_g.total);
}

void tl_progress_end(void)
{
    tl_progress_g = (tl_progress_t){.next = UINT64_MAX};
    g.phase = NULL;
    if (g.fd < 0 || !g.drawn_len) return;
    char line[258];
    size_t n = g.drawn_len < sizeof line - 2 ? g.drawn_len : sizeof line - 2;
    line[0] = '\r';
    memset(line + 1, ' ', n);
    line[n + 1] = '\r';
    put(line, n + 2);
    g.drawn_len = 0;
}

/* "7s", "1m05s", "2h03m". */
static void eta_text(uint64_t s, char *buf, size_t n)
{
    if (s < 60)
        snprintf(buf, n, "%" PRIu64 "s", s);
    else if (s < 3600)
        snprintf(buf, n, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
    else
        snprintf(buf, n, "%" PRIu64 "h%02" PRIu64 "m", s / 3600, s / 60 % 60);
}

size_t tl_progress_format(char *buf, size_t n, const char *phase, uint64_t done, uint64_t total,
                          uint64_t elapsed_ns)
{
    char d[32], t[32], r[32], eta[32];
    if (done > total) done = total;
    unsigned pct = total ? (unsigned)((double)done * 100.0 / (double)total) : 100;
    tl_size_text(done, d, sizeof d);
    tl_size_text(total, t, sizeof t);
    if (elapsed_ns < RATE_AFTER_NS || done == 0) {
        int k = snprintf(buf, n, "%s %s of %s (%u%%)", phase, d, t, pct);
        return k < 0 ? 0 : (size_t)k;
    }
    double rate = (double)done * 1e9 / (double)elapsed_ns; /* bytes a second */
    tl_size_text((uint64_t)rate, r, sizeof r);
    eta_text((uint64_t)((double)(total - done) / rate + 0.5), eta, sizeof eta);
    int k = snprintf(buf, n, "%s %s of %s (%u%%), %s/s, ETA %s", phase, d, t, pct, r, eta);
    return k < 0 ? 0 : (size_t)k;
}
