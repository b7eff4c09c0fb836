/* env.h - the agent's own environment variables (TENSORLEAK_EXEC_SEQ,
 * PYTHONPATH), set without making the C library allocate.
 *
 * The rule: glibc's putenv or setenv of a new variable copies environ into
 * an array it mallocs and keeps (setenv.c, last_environ), and reallocs that
 * array at the program's next new variable. Made by the agent, under its
 * guard, that array was a block the trace never saw, and the realloc a free
 * of a pointer `all` mode had not recorded: `import numpy` (its
 * os.environ["OPENBLAS_MAIN_FREE"] = "1") left one unknown free in every
 * trace.
 */
#ifndef TL_AGENT_ENV_H
#define TL_AGENT_ENV_H

/* Put entry ("NAME=value", owned by the caller and kept as long as the
 * process runs, as putenv's) in environ: in place of a variable already
 * set (as putenv does), else into an array of the agent's, mapped through
 * vm.h (the leak scan reads it as environ's: leakscan.c scan_environ), with
 * room to spare: glibc reallocs or frees only an array it made, so the
 * program's first new variable is a malloc of its own, as without the
 * agent, and recorded. Falls back to putenv when the mapping fails. Only
 * for tl_agent_init, in the one thread that runs before the program: not
 * thread-safe. */
void tl_env_put(char *entry);

#endif
