/* follow.h - the run's environment, given to every image a traced process
 * execs. A child started with an environment of its own
 * (subprocess.run(..., env={"PATH": ...}), os.posix_spawn(..., {}),
 * `env -i`) lost LD_PRELOAD and the run's TENSORLEAK_* variables: it ran
 * untraced, and `check` passed without it. The exec hooks (hooks_proc.c)
 * now give back what such an environment lacks, as valgrind's
 * --trace-children=yes follows every exec. A value the program sets for
 * its child stands: its own LD_PRELOAD (a sanitizer's runtime, which must
 * come first; another allocator) and TENSORLEAK_DISABLE=1 leave the child
 * as the program made it.
 *
 * Pure functions of their arguments, no allocation, no lock, async-signal-
 * safe: they run in vfork children (CPython's subprocess), where the memory
 * is the parent's. Only tl_follow_init reads the process's own state.
 */
#ifndef TL_AGENT_FOLLOW_H
#define TL_AGENT_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>

/* Limits of what is kept: the variables `run` and `check` set first, then
 * the others in environ's order; what does not fit is left out. */
#define TL_FOLLOW_VARS_MAX 64
#define TL_FOLLOW_STORE    8192

typedef struct tl_follow {
    /* "LD_PRELOAD=" the agent's entry, in store; NULL: the agent was not
     * preloaded by LD_PRELOAD, and nothing is followed. */
    const char *preload;
    const char *vars[TL_FOLLOW_VARS_MAX]; /* "TENSORLEAK_X=v", in store */
    size_t nvars;
    char store[TL_FOLLOW_STORE];
} tl_follow_t;

/* The process's own, taken once by tl_follow_init; all zero before. */
extern tl_follow_t tl_follow;

/* Fills f from envp (the environment the agent started with): self is the
 * agent's file as the loader named it (dladdr's dli_fname, which for a
 * preloaded library is LD_PRELOAD's entry itself). f->preload is set only
 * when an entry of envp's first LD_PRELOAD (entries split at ' ' and ':',
 * as ld.so(8) splits them) is self; then the TENSORLEAK_* variables but
 * TENSORLEAK_EXEC_SEQ (which belongs to one pid: config.h) are kept. */
void tl_follow_take(tl_follow_t *f, const char *const envp[], const char *self);

/* tl_follow_take on the process's environ and the agent's own file, into
 * tl_follow. Leaves it empty in a secure-execution process (its
 * TENSORLEAK_* come from TL_CONFIG_ADMIN_PATH alone: config.h). Call once,
 * before any exec hook runs (the library's constructor). */
void tl_follow_init(void);

/* Whether the exec of envp needs a new environment: no LD_PRELOAD in it,
 * or a blank one (f's agent then goes there), one of f's variables
 * missing, or seq (a whole "TENSORLEAK_EXEC_SEQ=..." string, or NULL) to
 * set. If so, *entries is the number of pointers tl_follow_envp writes at
 * most, the closing NULL included. */
bool tl_follow_need(const tl_follow_t *f, char *const envp[], const char *seq, size_t *entries);

/* The new environment, written to out (*entries of tl_follow_need): envp
 * in its order, without its TENSORLEAK_EXEC_SEQ when seq is given, a blank
 * first LD_PRELOAD replaced by the agent's; then the agent's LD_PRELOAD if
 * it had none, f's variables that it lacks, and seq. Returns out. The
 * strings of envp, f and seq are pointed to, not copied: they must outlive
 * the exec call. */
char **tl_follow_envp(const tl_follow_t *f, char *const envp[], const char *seq, char **out);

#endif
