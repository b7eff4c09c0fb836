/* last_leak.c - loses one block of 100 bytes with the process's last
 * allocation: nothing is allocated after it, so the agent's per-thread
 * state still holds its address at exit unless it keeps none a scan
 * reads (tests/integration/check_last_leak.sh).
 *
 * "last_leak term": a forked child loses the block (memset leaves its
 * address inside the block in a caller-saved register), waits in pause()
 * and is ended by its parent's SIGTERM; the parent exits 0 after it.
 * "last_leak term_exit": the same, but the child's own SIGTERM handler
 * calls exit(0), so the scan runs above the kernel's signal frame.
 */
/* The expected lines assume no optimisation, whatever CFLAGS say. */
#pragma GCC optimize("O0")

#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void lose(void)
{
    char *p = malloc(100); /* lost here */
    if (p) memset(p, 1, 100);
    p = NULL;
}

static void exit_now(int sig)
{
    (void)sig;
    exit(0);
}

/* Whether process pid sleeps (its /proc/PID/stat state S): blocked in a
 * system call. */
static bool asleep(pid_t pid)
{
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    const char *paren = strrchr(buf, ')'); /* the name may hold spaces */
    return paren && paren[1] == ' ' && paren[2] == 'S';
}

/* The child loses the block and waits for the signal; a flag in shared
 * memory (a store: no call that would overwrite the registers) says when.
 * own: its own SIGTERM handler calls exit() (a graceful shutdown). */
static int term(bool own)
{
    volatile int *ready =
        mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ready == MAP_FAILED) return 2;
    pid_t c = fork();
    if (c < 0) return 2;
    if (c == 0) {
        if (own) signal(SIGTERM, exit_now);
        lose();
        *ready = 1;
        for (;;)
            pause();
    }
    for (int i = 0; i < 30000 && !*ready; i++)
        usleep(1000);
    /* then into pause(): asleep (state S), however busy the machine */
    for (int i = 0; i < 30000 && !asleep(c); i++)
        usleep(1000);
    kill(c, SIGTERM);
    int st;
    waitpid(c, &st, 0);
    if (own) return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 3;
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM ? 0 : 3;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "term")) return term(false);
    if (argc > 1 && !strcmp(argv[1], "term_exit")) return term(true);
    lose();
    return 0;
}
