/* follow.h - the run's environment, given to every image a traced process
 * execs. A child started with an environment of its own
 * (subprocess.run(..., env={"PATH": ...}), os.posix_spawn(..., {}),
 * `env -i`) lost LD_PRELOAD and the run's TENSORLEAK_* variables: it ran
 * untraced, and `check` passed without it. The exec hooks (hooks_proc.c)
 * now give back what such an environment lacks, as valgrind's
 * --trace-children=yes follows every exec; a variable the program sets
 * itself (TENSORLEAK_DISABLE=1 for a child) keeps its value.
 *
 * Pure functions of their arguments, no allocation, no lock, async-signal-
 * safe: they run in vfork children (CPython's subprocess), where the memory
 * is the parent's. Only tl_follow_init reads the process's own state.
 */
#ifndef TL_AGENT_FOLLOW_H
#define TL_AGENT_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>

/* Limits of what is kept; what does not fit is left out (not followed). */
#define TL_FOLLOW_VARS_MAX 32
#define TL_FOLLOW_STORE    4096

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
 * as ld.so(8) splits them) is self; then every TENSORLEAK_* variable but
 * TENSORLEAK_EXEC_SEQ (which belongs to one pid: config.h) is kept. */
void tl_follow_take(tl_follow_t *f, const char *const envp[], const char *self);

/* tl_follow_take on the process's environ and the agent's own file, into
 * tl_follow. Leaves it empty in a secure-execution process (its
 * TENSORLEAK_* come from TL_CONFIG_ADMIN_PATH alone: config.h). Call once,
 * before any exec hook runs (the library's constructor). */
void tl_follow_init(void);

/* Whether the exec of envp needs a new environment: f's LD_PRELOAD entry
 * missing from envp's first LD_PRELOAD, one of f's variables missing, or
 * seq (a whole "TENSORLEAK_EXEC_SEQ=..." string, or NULL) to set. If so,
 * *entries (pointers, the closing NULL included) and *bytes (text) are
 * what tl_follow_envp writes, at most. */
bool tl_follow_need(const tl_follow_t *f, char *const envp[], const char *seq, size_t *entries,
                    size_t *bytes);

/* The new environment, written to out (*entries of tl_follow_need) and buf
 * (*bytes): envp in its order, without its TENSORLEAK_EXEC_SEQ when seq is
 * given, and with its first LD_PRELOAD "LD_PRELOAD=<agent> <its value>"
 * (later ones left out) when it lacks the agent; then "LD_PRELOAD=<agent>"
 * if it had none, f's variables that it lacks, and seq. Returns out. The
 * strings of envp, f and seq are pointed to, not copied: they must outlive
 * the exec call. */
char **tl_follow_envp(const tl_follow_t *f, char *const envp[], const char *seq, char **out,
                      char *buf);

#endif
