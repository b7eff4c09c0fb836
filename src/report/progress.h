/* progress.h - the one progress line of a long read ("tensorleak: reading
 * 120.0 MiB of 250.0 MiB (48%), 45.2 MiB/s, ETA 3s") on stderr, redrawn in
 * place with \r and cleared when the pass ends. The CLI turns it on (a
 * terminal, no --quiet); off, it writes nothing. The readers count bytes
 * with tl_progress_add, which checks a counter, never the clock; the clock
 * is read once per step of the total, and the line drawn at most 10 times a
 * second. Output through write(2) alone: no stdio, stdout never touched.
 * Process-wide state: not thread-safe (the pipeline is not either).
 */
#ifndef TL_REPORT_PROGRESS_H
#define TL_REPORT_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

/* The state behind tl_progress_add (progress.c owns it; read it only
 * through the functions below). next is UINT64_MAX while no line is
 * drawn, so that tl_progress_add is one add and one compare. */
typedef struct tl_progress {
    uint64_t done, total; /* bytes of the current pass */
    uint64_t next;        /* done at which tl_progress_tick runs */
} tl_progress_t;

extern tl_progress_t tl_progress_g;

/* Draw the lines on fd (2: stderr), or never (-1, the default). The CLI
 * calls it once, before any pass, when isatty(2) and not --quiet. Lines
 * are cut to the terminal's width then (TIOCGWINSZ; 80 when unknown). */
void tl_progress_enable(int fd);

/* A pass over total bytes begins: its first line is drawn at once (phase,
 * a static string, "reading"). Replaces a pass that did not end. */
void tl_progress_begin(const char *phase, uint64_t total);

/* The clock check of tl_progress_add: redraws the line when 100 ms have
 * passed since the last; sets the next byte count to check at. */
void tl_progress_tick(void);

/* bytes more of the pass were read. Cheap: the readers call it per chunk. */
static inline void tl_progress_add(uint64_t bytes)
{
    if ((tl_progress_g.done += bytes) >= tl_progress_g.next) tl_progress_tick();
}

/* The pass ended: its line, if any, is cleared (spaces, then \r), so the
 * next output starts on a clean line. Harmless when no pass is on. */
void tl_progress_end(void);

/* The line for phase at done of total bytes, elapsed_ns since the pass
 * began, into buf (n bytes; cut to fit, always NUL-terminated): "reading
 * 1.00 MiB of 4.00 MiB (25%)", then ", 2.00 MiB/s, ETA 2s" once 200 ms
 * have passed and a byte was read. ETA: "7s", "1m05s", "2h03m". Returns
 * the length of the line (as snprintf does). Pure; reentrant. */
size_t tl_progress_format(char *buf, size_t n, const char *phase, uint64_t done, uint64_t total,
                          uint64_t elapsed_ns);

#endif
