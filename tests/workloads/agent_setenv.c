/* agent_setenv.c - a program that adds variables to its environment (as
 * numpy's import does: OPENBLAS_MAIN_FREE), replaces one and removes one,
 * then prints what it set and the agent's own TENSORLEAK_EXEC_SEQ. glibc
 * copies environ into an array it mallocs at the first new variable and
 * reallocs that array at the next: in `all` mode both must be blocks of
 * the trace. For tests/integration/agent_environ.sh.
 */
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    if (setenv("TL_ENV_A", "1", 1) || setenv("TL_ENV_B", "2", 1) || setenv("TL_ENV_A", "3", 1) ||
        unsetenv("TL_ENV_B") || setenv("TL_ENV_C", "4", 1))
        return 99;
    const char *a = getenv("TL_ENV_A"), *b = getenv("TL_ENV_B"), *c = getenv("TL_ENV_C");
    const char *seq = getenv("TENSORLEAK_EXEC_SEQ");
    printf("A=%s B=%s C=%s seq=%s\n", a ? a : "-", b ? b : "-", c ? c : "-", seq ? seq : "-");
    return 0;
}
