/* timeit.c - run one command, report its wall time and peak RSS.
 *
 * usage: timeit RESULT LOG CMD [ARGS...]
 * Runs CMD with stdout and stderr sent to LOG, then writes one line
 * "WALL_S MAXRSS_KIB STATUS" to RESULT: wall time from CLOCK_MONOTONIC around
 * fork..wait4, ru_maxrss of the child (the largest process of its tree that
 * was waited for: heaptrack's interpreter counts), and its exit status
 * (128+N for signal N). Exits 0 when the result was written, 99 otherwise.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fputs("usage: timeit RESULT LOG CMD [ARGS...]\n", stderr);
        return 99;
    }
    int log = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log < 0) {
        perror(argv[2]);
        return 99;
    }
    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 99;
    }
    if (pid == 0) {
        dup2(log, 1);
        dup2(log, 2);
        execvp(argv[3], argv + 3);
        perror(argv[3]);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0) {
        perror("wait4");
        return 99;
    }
    double wall = now_s() - t0;
    int status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    FILE *out = fopen(argv[1], "w");
    if (!out || fprintf(out, "%.6f %ld %d\n", wall, ru.ru_maxrss, status) < 0 || fclose(out)) {
        perror(argv[1]);
        return 99;
    }
    return 0;
}
