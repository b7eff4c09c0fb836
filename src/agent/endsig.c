/* endsig.c - the SIGTERM end point (see endsig.h).
 *
 * Runs in signal context and inside the program's sigaction calls: atomics
 * only, no locks, no malloc, no stdio.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/endsig.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

/* true while the agent's handler is installed for SIGTERM in the program's
 * stead (the program's view: SIG_DFL with view_flags). */
static atomic_bool owned;
static atomic_int view_flags;
static sigset_t view_mask; /* written by the program's rare sigaction calls only */
static tl_sigaction_fn real_sigaction;
static void (*end_trace)(int);

static void on_term(int sig)
{
    int saved = errno;
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    /* Give the signal back first: a second SIGTERM now kills at once. */
    atomic_store(&owned, false);
    real_sigaction(sig, &dfl, NULL);
    if (end_trace) end_trace(sig);
    sigset_t one;
    sigemptyset(&one);
    sigaddset(&one, sig);
    raise(sig); /* pending while the handler blocks it */
    pthread_sigmask(SIG_UNBLOCK, &one, NULL);
    errno = saved; /* only reached if the default action did not end us */
}

static int install(void)
{
    struct sigaction ours;
    memset(&ours, 0, sizeof ours);
    ours.sa_handler = on_term;
    ours.sa_flags = SA_RESTART;
    sigemptyset(&ours.sa_mask);
    return real_sigaction(SIGTERM, &ours, NULL);
}

void tl_endsig_init(tl_sigaction_fn real, void (*on_signal)(int sig))
{
    atomic_store(&owned, false);
    if (!real) return;
    real_sigaction = real;
    end_trace = on_signal;
    struct sigaction cur;
    if (real(SIGTERM, NULL, &cur) != 0 || (cur.sa_flags & SA_SIGINFO) || cur.sa_handler != SIG_DFL)
        return;
    atomic_store(&view_flags, cur.sa_flags);
    view_mask = cur.sa_mask;
    if (install() == 0) atomic_store(&owned, true);
}

int tl_endsig_sigaction(tl_sigaction_fn real, int sig, const struct sigaction *act,
                        struct sigaction *old)
{
    if (sig != SIGTERM || !real_sigaction) return real(sig, act, old);
    bool dfl = act && !(act->sa_flags & SA_SIGINFO) && act->sa_handler == SIG_DFL;
    if (!atomic_load(&owned)) {
        /* The program's handler (or SIG_IGN) stands; SIG_DFL gives SIGTERM back to us. */
        if (!dfl) return real(sig, act, old);
        struct sigaction prev;
        if (real(sig, NULL, &prev) != 0) return -1;
        if (install() != 0) return real(sig, act, old);
        atomic_store(&view_flags, act->sa_flags);
        view_mask = act->sa_mask;
        atomic_store(&owned, true);
        if (old) *old = prev;
        return 0;
    }
    struct sigaction view;
    memset(&view, 0, sizeof view);
    view.sa_handler = SIG_DFL;
    view.sa_flags = atomic_load(&view_flags);
    view.sa_mask = view_mask;
    if (act && !dfl) {
        if (real(sig, act, NULL) != 0) return -1; /* EINVAL etc.: ours stays */
        atomic_store(&owned, false);
    } else if (act) {
        atomic_store(&view_flags, act->sa_flags);
        view_mask = act->sa_mask;
    }
    if (old) *old = view;
    return 0;
}
