/* run_notes.c - the notes a run's agents send to the CLI (run_notes.h). */
#include "config.h"
#include "tools/run_notes.h"

#include "common/notes.h"
#include "tools/launch.h"
#include "tools/say.h"
#include "tools/settle.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* One kind of note: the lines of several processes that differ only in
 * their middle part (a trace's path). */
typedef struct note {
    char a[512], b[1024], c[512];
    uint64_t pids[TL_LAUNCH_RUNNING_PIDS];
    unsigned n;
} note_t;

#define NOTE_KINDS 16

struct tl_run_notes {
    int fd;
    note_t kinds[NOTE_KINDS];
    unsigned nkinds, lost;
};

tl_run_notes_t *tl_run_notes_open(uint64_t session)
{
    tl_run_notes_t *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_un a;
    socklen_t alen = tl_notes_addr(session, &a);
    if (n->fd < 0 || bind(n->fd, (struct sockaddr *)&a, alen) != 0) {
        tl_run_notes_close(n);
        return NULL;
    }
    int big = 1 << 20; /* room for the notes of a few thousand processes */
    setsockopt(n->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    return n;
}

int tl_run_notes_fd(const tl_run_notes_t *n)
{
    return n ? n->fd : -1;
}

void tl_run_notes_take(tl_run_notes_t *ns)
{
    if (!ns) return;
    char msg[TL_NOTES_MAX + 1];
    ssize_t r;
    while ((r = recv(ns->fd, msg, TL_NOTES_MAX, 0)) > 0) {
        msg[r] = '\0';
        const char *part[4] = {msg, "", "", ""}; /* pid, a, b, c */
        for (ssize_t i = 0, k = 1; i < r && k < 4; i++)
            if (!msg[i]) part[k++] = msg + i + 1;
        unsigned i = 0;
        while (i < ns->nkinds &&
               (strcmp(ns->kinds[i].a, part[1]) || strcmp(ns->kinds[i].c, part[3])))
            i++;
        if (i == ns->nkinds) {
            if (ns->nkinds == NOTE_KINDS) {
                ns->lost++;
                continue;
            }
            note_t *n = &ns->kinds[ns->nkinds++];
            snprintf(n->a, sizeof n->a, "%s", part[1]);
            snprintf(n->b, sizeof n->b, "%s", part[2]);
            snprintf(n->c, sizeof n->c, "%s", part[3]);
            n->n = 0;
        }
        note_t *n = &ns->kinds[i];
        if (n->n < TL_LAUNCH_RUNNING_PIDS) n->pids[n->n] = strtoull(part[0], NULL, 10);
        n->n++;
    }
}

void tl_run_notes_say(tl_run_notes_t *ns)
{
    if (!ns) return;
    tl_run_notes_take(ns);
    for (unsigned i = 0; i < ns->nkinds; i++) {
        const note_t *n = &ns->kinds[i];
        char pids[TL_SETTLE_PIDS_LEN], more[64] = "";
        unsigned shown = n->n < TL_LAUNCH_RUNNING_PIDS ? n->n : TL_LAUNCH_RUNNING_PIDS;
        tl_settle_pids(pids, n->pids, shown);
        if (n->n > shown) snprintf(more, sizeof more, " (and %u more)", n->n - shown);
        char like[64] = "";
        if (n->n > 1 && n->b[0]) snprintf(like, sizeof like, " (and %u more like it)", n->n - 1);
        tl_say("pid%s %s%s: %s%s%s%s", n->n > 1 ? "s" : "", pids, more, n->a, n->b, n->c, like);
    }
    if (ns->lost) tl_say("%u more notes of the run's processes not shown", ns->lost);
    tl_run_notes_close(ns);
}

void tl_run_notes_close(tl_run_notes_t *n)
{
    if (!n) return;
    if (n->fd >= 0) close(n->fd);
    free(n);
}
