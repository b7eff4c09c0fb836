/* live_writer.c - a program that keeps writing its trace, for
 * report_live.sh: malloc/free pairs from one site until the file PAUSE
 * exists, then (no more allocations) it writes the number of pairs made to
 * ACK and waits for the file STOP, then exits 0, so that the agent ends and
 * cuts its trace while a reader runs on it.
 *
 * usage: live_writer PAUSE ACK STOP
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

__attribute__((noinline)) static void *site(size_t n)
{
    return malloc(n);
}

static void nap(void)
{
    struct timespec ts = {0, 1000 * 1000}; /* 1 ms */
    nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
    if (argc != 4) return 2;
    unsigned long pairs = 0;
    for (;;) {
        for (int i = 0; i < 4096; i++, pairs++)
            free(site(16 + (pairs & 1023)));
        if (access(argv[1], F_OK) == 0) break;
    }
    char line[32];
    int n = snprintf(line, sizeof line, "%lu\n", pairs); /* no allocation */
    int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, line, (size_t)n) != n || close(fd) != 0) return 3;
    while (access(argv[3], F_OK) != 0)
        nap();
    return 0;
}
