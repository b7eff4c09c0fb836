/* config.c - parse the TENSORLEAK_* environment into a tl_config_t.
 *
 * Pure: no allocation, no stdio, no getenv (the caller hands us envp), so it
 * is safe inside the agent's constructor and easy to unit-test.
 */
#include <config.h> /* autoconf first: _GNU_SOURCE */

#include "agent/config.h"

#include <errno.h>
#include <string.h>

bool tl_config_parse_u64(const char *s, uint64_t *out)
{
    if (!s || !*s) return true;
    uint64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return true;
        unsigned d = (unsigned)(*s - '0');
        if (v > (UINT64_MAX - d) / 10) return true;
        v = v * 10 + d;
    }
    *out = v;
    return false;
}

bool tl_config_parse_size(const char *s, uint64_t *out)
{
    if (!s || *s < '0' || *s > '9') return true;
    char digits[24];
    size_t n = 0;
    while (s[n] >= '0' && s[n] <= '9') {
        if (n + 1 >= sizeof digits) return true;
        digits[n] = s[n];
        n++;
    }
    digits[n] = '\0';
    uint64_t v;
    if (tl_config_parse_u64(digits, &v)) return true;
    static const struct {
        const char *unit;
        uint64_t mul;
    } units[] = {
        {"", 1},
        {"B", 1},
        {"K", UINT64_C(1) << 10},
        {"KiB", UINT64_C(1) << 10},
        {"KB", 1000},
        {"M", UINT64_C(1) << 20},
        {"MiB", UINT64_C(1) << 20},
        {"MB", 1000000},
        {"G", UINT64_C(1) << 30},
        {"GiB", UINT64_C(1) << 30},
        {"GB", 1000000000},
        {"T", UINT64_C(1) << 40},
        {"TiB", UINT64_C(1) << 40},
        {"TB", UINT64_C(1000000000000)},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (strcmp(s + n, units[i].unit) != 0) continue;
        if (v > UINT64_MAX / units[i].mul) return true;
        *out = v * units[i].mul;
        return false;
    }
    return true;
}

const char *tl_config_env(const char *const *envp, const char *name)
{
    size_t n = strlen(name);
    for (; envp && *envp; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=') return *envp + n + 1;
    return NULL;
}

/* TENSORLEAK_EXEC_SEQ's value v, "PID:N": N earlier images of PID. Another
 * pid's value was inherited across fork or spawn, so this image is that
 * pid's first: 0 (and 0 when v is NULL or malformed). */
static uint32_t exec_seq(const char *v, uint64_t pid)
{
    const char *colon = v ? strchr(v, ':') : NULL;
    if (!colon || (size_t)(colon - v) >= 24) return 0;
    char pidbuf[24];
    memcpy(pidbuf, v, (size_t)(colon - v));
    pidbuf[colon - v] = '\0';
    uint64_t p, n;
    if (tl_config_parse_u64(pidbuf, &p) || tl_config_parse_u64(colon + 1, &n) || p != pid ||
        n > UINT32_MAX)
        return 0;
    return (uint32_t)n;
}

void tl_config_parse(tl_config_t *cfg, const char *const *envp, uint64_t pid)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->stack_depth = TL_CONFIG_DEPTH_DEFAULT;

    const char *v = tl_config_env(envp, "TENSORLEAK_DISABLE");
    cfg->disable = v && *v && strcmp(v, "0") != 0;

    v = tl_config_env(envp, "TENSORLEAK_STACK_DEPTH");
    if (v) {
        uint64_t d;
        if (tl_config_parse_u64(v, &d))
            cfg->depth_invalid = true;
        else
            cfg->stack_depth = d < 1                     ? 1
                               : d > TL_CONFIG_DEPTH_MAX ? TL_CONFIG_DEPTH_MAX
                                                         : (unsigned)d;
    }

    v = tl_config_env(envp, "TENSORLEAK_SESSION");
    if (v && tl_config_parse_u64(v, &cfg->session)) cfg->session = 0;

    cfg->exec_seq = exec_seq(tl_config_env(envp, TL_CONFIG_EXEC_SEQ_ENV), pid);

    cfg->fingerprint_min = TL_CONFIG_FINGERPRINT_MIN_DEFAULT;
    v = tl_config_env(envp, "TENSORLEAK_FINGERPRINT_MIN");
    if (v && tl_config_parse_size(v, &cfg->fingerprint_min)) {
        cfg->fingerprint_min = TL_CONFIG_FINGERPRINT_MIN_DEFAULT;
        cfg->fingerprint_min_invalid = true;
    }

    v = tl_config_env(envp, "TENSORLEAK_PYTHON_FRAMES");
    cfg->no_python_frames = v && strcmp(v, "0") == 0;

    v = tl_config_env(envp, "TENSORLEAK_STACK_DELTA");
    cfg->no_stack_delta = v && strcmp(v, "0") == 0;

    v = tl_config_env(envp, "TENSORLEAK_LEAK_SCAN");
    cfg->leak_scan = v && strcmp(v, "1") == 0;

    v = tl_config_env(envp, "TENSORLEAK_PYTHON_DIR");
    if (v && strlen(v) < sizeof cfg->python_dir) strcpy(cfg->python_dir, v);

    cfg->mode = TL_MODE_DEFAULT;
    v = tl_config_env(envp, "TENSORLEAK_MODE");
    if (v && *v) {
        if (strcmp(v, "all") == 0)
            cfg->mode = TL_MODE_ALL;
        else if (strcmp(v, "aggregate") == 0)
            cfg->mode = TL_MODE_AGGREGATE;
        else if (strcmp(v, "default") != 0)
            cfg->mode_invalid = true;
    }
    v = tl_config_env(envp, "TENSORLEAK_AGGREGATE");
    if (v && *v && strcmp(v, "0") != 0 && cfg->mode == TL_MODE_DEFAULT)
        cfg->mode = TL_MODE_AGGREGATE;

    cfg->sample_bytes = TL_CONFIG_SAMPLE_BYTES_DEFAULT;
    v = tl_config_env(envp, "TENSORLEAK_SAMPLE_BYTES");
    if (v && (tl_config_parse_size(v, &cfg->sample_bytes) || cfg->sample_bytes == 0 ||
              cfg->sample_bytes > (UINT64_C(1) << 40))) {
        cfg->sample_bytes = TL_CONFIG_SAMPLE_BYTES_DEFAULT;
        cfg->sample_bytes_invalid = true;
    }

    cfg->checkpoint_ms = TL_CONFIG_CHECKPOINT_MS_DEFAULT;
    v = tl_config_env(envp, "TENSORLEAK_CHECKPOINT_MS");
    uint64_t ms;
    if (v && !tl_config_parse_u64(v, &ms) && ms >= 1 && ms <= 3600000)
        cfg->checkpoint_ms = (unsigned)ms;

    v = tl_config_env(envp, "TENSORLEAK_OUTPUT");
    if (!v || !*v || strlen(v) >= sizeof cfg->output) v = TL_CONFIG_OUTPUT_DEFAULT;
    strcpy(cfg->output, v);
}

void tl_config_parse_secure(tl_config_t *cfg, char *admin, uint64_t pid)
{
    const char *envp[64];
    size_t n = 0;
    for (char *line = admin; line && *line && n < sizeof envp / sizeof envp[0] - 1;) {
        char *end = strchr(line, '\n');
        if (end) *end = '\0';
        while (*line == ' ' || *line == '\t')
            line++;
        if (strncmp(line, "TENSORLEAK_", 11) == 0 && strchr(line, '=')) envp[n++] = line;
        line = end ? end + 1 : NULL;
    }
    envp[n] = NULL;
    const char *out = tl_config_env(envp, "TENSORLEAK_OUTPUT");
    tl_config_parse(cfg, envp, pid);
    if (!admin || !out || out[0] != '/') cfg->disable = true;
}

const char *tl_config_mode_name(tl_mode_t mode)
{
    return mode == TL_MODE_ALL ? "all" : mode == TL_MODE_AGGREGATE ? "aggregate" : "default";
}

/* Append to [*p, end). true = failure: it does not fit (NUL kept in mind). */
static bool put(char **p, char *end, const char *s, size_t n)
{
    if ((size_t)(end - *p) <= n) return true;
    memcpy(*p, s, n);
    *p += n;
    return false;
}

static size_t fmt_u64(char *buf, uint64_t v)
{
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    return n;
}

int tl_config_expand(const char *pattern, const char *cwd, uint64_t pid, const char *host,
                     unsigned uniq, char *out, size_t outlen)
{
    if (outlen == 0) return -ENAMETOOLONG;
    char *p = out, *end = out + outlen;
    char num[24];
    if (pattern[0] != '/' && cwd) {
        if (put(&p, end, cwd, strlen(cwd)) || put(&p, end, "/", 1)) return -ENAMETOOLONG;
    }
    for (const char *s = pattern; *s; s++) {
        bool full;
        if (s[0] == '%' && s[1] == 'p') {
            full = put(&p, end, num, fmt_u64(num, pid));
            s++;
        } else if (s[0] == '%' && s[1] == 'h' && host) {
            full = put(&p, end, host, strlen(host));
            s++;
        } else if (s[0] == '%' && s[1] == '%') {
            full = put(&p, end, "%", 1);
            s++;
        } else {
            full = put(&p, end, s, 1);
        }
        if (full) return -ENAMETOOLONG;
    }
    *p = '\0';
    if (uniq == 0) return 0;

    /* Insert ".N" before the extension of the last component. A leading dot
     * (".hidden") is no extension. */
    char *base = strrchr(out, '/');
    base = base ? base + 1 : out;
    char *dot = strrchr(base, '.');
    if (!dot || dot == base) dot = p;
    size_t tail = (size_t)(p - dot);
    num[0] = '.';
    size_t nn = 1 + fmt_u64(num + 1, uniq);
    if ((size_t)(end - p) <= nn) return -ENAMETOOLONG;
    memmove(dot + nn, dot, tail + 1);
    memcpy(dot, num, nn);
    return 0;
}

int tl_config_exec_seq_env(char *out, size_t outlen, uint64_t pid, uint64_t n)
{
    char *p = out, *end = out + outlen;
    char num[24];
    static const char name[] = TL_CONFIG_EXEC_SEQ_ENV "=";
    if (put(&p, end, name, sizeof name - 1) || put(&p, end, num, fmt_u64(num, pid)) ||
        put(&p, end, ":", 1) || put(&p, end, num, fmt_u64(num, n)))
        return -ENAMETOOLONG;
    *p = '\0';
    return 0;
}
