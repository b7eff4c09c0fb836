/* env.c - the agent's own environment variables (env.h). */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/env.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/vm.h"

void tl_env_put(char *entry)
{
    extern char **environ;
    static char **own; /* the array mapped here, and its room in entries */
    static size_t own_room;
    size_t nl = (size_t)(strchr(entry, '=') - entry), n = 0;
    for (char **e = environ; e && e[n]; n++)
        if (strncmp(e[n], entry, nl) == 0 && e[n][nl] == '=') {
            e[n] = entry;
            return;
        }
    if (environ == own && n + 2 <= own_room) {
        own[n + 1] = NULL;
        own[n] = entry;
        return;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = ((n + 2) * sizeof(char *) + page - 1) & ~(page - 1);
    void *m;
    if (tl_vm_map_anon(&m, bytes, false)) {
        putenv(entry); /* set all the same: the one unknown free comes back */
        return;
    }
    char **a = m;
    if (n) memcpy(a, environ, n * sizeof *a);
    a[n] = entry;
    a[n + 1] = NULL;
    char **old = environ == own ? own : NULL;
    size_t old_bytes = own_room * sizeof *a;
    environ = own = a;
    own_room = bytes / sizeof *a;
    if (old) tl_vm_unmap(old, old_bytes);
}
