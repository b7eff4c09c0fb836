/* session_mark.h - the name by which a process shows that it is of a run.
 *
 * Under `tensorleak run` or `check` (a session: TENSORLEAK_SESSION), the
 * agent maps a memfd named tl_session_mark_name at its start (PROT_NONE,
 * its fd closed: no byte of it is ever touched, no fd is left to the
 * program). /proc/PID/maps shows it as "/memfd:tensorleak-session-<16 hex
 * digits> (deleted)", and a fork child inherits it at the fork itself,
 * before its agent has opened the child's trace. The CLI looks for it
 * (tools/procs.c) where the environment cannot say: a program that
 * rewrote its environment area (setproctitle, as Ray, gunicorn and celery
 * do) forks children whose /proc/PID/environ no longer holds the session.
 */
#ifndef TL_COMMON_SESSION_MARK_H
#define TL_COMMON_SESSION_MARK_H

#include <stdint.h>
#include <string.h>

#define TL_SESSION_MARK_PREFIX "tensorleak-session-"

/* The size of tl_session_mark_name's buffer: the prefix, 16 digits, NUL. */
#define TL_SESSION_MARK_LEN (sizeof TL_SESSION_MARK_PREFIX + 16)

/* "tensorleak-session-" and session in 16 hex digits into buf
 * (TL_SESSION_MARK_LEN bytes). No allocation, no locale. */
static inline void tl_session_mark_name(uint64_t session, char *buf)
{
    memcpy(buf, TL_SESSION_MARK_PREFIX, sizeof TL_SESSION_MARK_PREFIX - 1);
    char *h = buf + sizeof TL_SESSION_MARK_PREFIX - 1;
    for (int i = 0; i < 16; i++)
        h[i] = "0123456789abcdef"[(session >> (60 - 4 * i)) & 15];
    h[16] = '\0';
}

#endif
