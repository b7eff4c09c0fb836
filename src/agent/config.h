/* config.h - the agent's configuration, parsed once from the environment.
 *
 * Pure functions (no allocation, no I/O): the agent calls them at init with
 * its environment, the unit tests with made-up ones. Thread-safe: no state.
 */
#ifndef TL_AGENT_CONFIG_H
#define TL_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TL_CONFIG_DEPTH_DEFAULT           64u
#define TL_CONFIG_DEPTH_MAX               1024u
#define TL_CONFIG_PATH_MAX                4096u
#define TL_CONFIG_OUTPUT_DEFAULT          "tensorleak.%p.tlt"
#define TL_CONFIG_EXEC_SEQ_ENV            "TENSORLEAK_EXEC_SEQ"
#define TL_CONFIG_FINGERPRINT_MIN_DEFAULT (UINT64_C(1) << 20)   /* 1 MiB */
#define TL_CONFIG_SAMPLE_BYTES_DEFAULT    (UINT64_C(512) << 10) /* 512 KiB, as tcmalloc's */
/* Plain blocks of at least this many bytes always get a full stack outside
 * `all` mode: the report treats numpy's >= 64 KiB buffers as storages
 * (TL_NUMPY_MIN_STORAGE in src/report/storages.h). */
#define TL_CONFIG_BIG_MIN               (UINT64_C(64) << 10)
#define TL_CONFIG_CHECKPOINT_MS_DEFAULT 1000u

/* What the agent records (TENSORLEAK_MODE). */
typedef enum tl_mode {
    TL_MODE_DEFAULT = 0,   /* storages and big blocks with stacks; others byte-sampled */
    TL_MODE_ALL = 1,       /* every allocation and free with its full stack */
    TL_MODE_AGGREGATE = 2, /* default's selection, kept as per-site totals and live sets */
} tl_mode_t;

typedef struct tl_config {
    bool disable;                    /* TENSORLEAK_DISABLE=1: no tracing at all */
    unsigned stack_depth;            /* frames kept per stack, in [1, TL_CONFIG_DEPTH_MAX] */
    bool depth_invalid;              /* TENSORLEAK_STACK_DEPTH was set but not a number */
    uint64_t session;                /* TENSORLEAK_SESSION (decimal), 0 if unset or bad */
    uint32_t exec_seq;               /* earlier images of this pid (TENSORLEAK_EXEC_SEQ) */
    char output[TL_CONFIG_PATH_MAX]; /* TENSORLEAK_OUTPUT pattern, unexpanded */
    /* TENSORLEAK_FINGERPRINT_MIN: storages of at least this many bytes are
     * fingerprinted at report points (default 1 MiB). */
    uint64_t fingerprint_min;
    bool fingerprint_min_invalid; /* set but not a size: the default is used */
    /* TENSORLEAK_PYTHON_FRAMES=0: native stacks only, even in CPython. */
    bool no_python_frames;
    /* TENSORLEAK_STACK_DELTA=0: every new stack as a full STACK record,
     * never a STACK_DELTA of the thread's last one (stackdelta.h). */
    bool no_stack_delta;
    /* TENSORLEAK_LEAK_SCAN=1 (`all` mode only): keep every live block in the
     * live table and classify them at exit (leakscan.h). */
    bool leak_scan;
    /* TENSORLEAK_PYTHON_DIR: the Python package directory to put first on
     * PYTHONPATH of a CPython process; "" = none given. */
    char python_dir[TL_CONFIG_PATH_MAX];
    /* TENSORLEAK_MODE=default|all|aggregate (TENSORLEAK_AGGREGATE=1 is
     * aggregate too); mode_invalid: set to something else, default used. */
    tl_mode_t mode;
    bool mode_invalid;
    /* TENSORLEAK_SAMPLE_BYTES: mean bytes between samples (a size); 0 or
     * invalid: the default. 1 samples every block. */
    uint64_t sample_bytes;
    bool sample_bytes_invalid;
    /* TENSORLEAK_CHECKPOINT_MS: aggregate mode's checkpoint period. */
    unsigned checkpoint_ms;
} tl_config_t;

/* "default", "all", "aggregate". */
const char *tl_config_mode_name(tl_mode_t mode);

/* Decimal u64, no sign, no spaces, no overflow. true = failure. */
bool tl_config_parse_u64(const char *s, uint64_t *out);

/* A byte count: decimal digits, optionally followed by a unit: B, K/KiB,
 * M/MiB, G/GiB, T/TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000).
 * No sign, no spaces, no fraction, no overflow. true = failure. */
bool tl_config_parse_size(const char *s, uint64_t *out);

/* Value of NAME in envp (a NULL-terminated "NAME=value" array), or NULL. */
const char *tl_config_env(const char *const *envp, const char *name);

/* Fill cfg from envp. pid is this process's: TENSORLEAK_EXEC_SEQ has the
 * form "PID:N" and counts only when PID is ours (see tl_config_exec_seq_env). */
void tl_config_parse(tl_config_t *cfg, const char *const *envp, uint64_t pid);

/* The administrator's configuration for secure-execution processes
 * (AT_SECURE: setuid, setgid, file capabilities). */
#define TL_CONFIG_ADMIN_PATH "/etc/tensorleak.conf"
#define TL_CONFIG_ADMIN_MAX  4096u /* bytes read of it, at most */

/* Fill cfg for a secure-execution process: the environment is the caller's
 * (an unprivileged user's) and is ignored whole. Recording is on only when
 * admin (the text of TL_CONFIG_ADMIN_PATH, which the caller checked to be
 * root-owned and writable by root only; NULL: no such file) sets it up:
 * lines "TENSORLEAK_NAME=value" read as the environment would be, '#'
 * comments and blank lines skipped, and TENSORLEAK_OUTPUT must be an
 * absolute path (else nothing is recorded). admin is split in place. */
void tl_config_parse_secure(tl_config_t *cfg, char *admin, uint64_t pid);

/* Expand an output pattern: %p = pid, %h = host (the host name; kept as
 * "%h" when host is NULL), %% = %, any other %c is kept as is.
 * uniq > 0 inserts ".uniq" before the extension of the last path component
 * ("t.12.tlt" -> "t.12.3.tlt"; no extension: appended). A relative result is
 * prefixed with cwd + "/" when cwd is not NULL. Returns 0, or -ENAMETOOLONG
 * when out (outlen bytes, NUL included) is too small. */
int tl_config_expand(const char *pattern, const char *cwd, uint64_t pid, const char *host,
                     unsigned uniq, char *out, size_t outlen);

/* Format "TENSORLEAK_EXEC_SEQ=PID:N" into out; returns 0 or -ENAMETOOLONG. */
int tl_config_exec_seq_env(char *out, size_t outlen, uint64_t pid, uint64_t n);

#endif /* TL_AGENT_CONFIG_H */
