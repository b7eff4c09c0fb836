/* agent_fsize.c - a program under a file size limit (ulimit -f, issue 9).
 * usage: agent_fsize PAIRS [FILE]
 * Makes PAIRS malloc/free pairs (enough trace to pass the limit in `all`
 * mode), prints "fsize: pairs=PAIRS". With FILE it also handles SIGXFSZ
 * itself: it writes FILE up to its RLIMIT_FSIZE, then one byte more, and
 * prints "fsize: xfsz=N errno=E", N the SIGXFSZ it received (1: its own).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static volatile sig_atomic_t xfsz;

static void on_xfsz(int sig)
{
    (void)sig;
    xfsz++;
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    if (argc == 3) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_xfsz;
        sigaction(SIGXFSZ, &sa, NULL);
    }
    long pairs = atol(argv[1]);
    for (long i = 0; i < pairs; i++) {
        void *p = malloc(8 + (size_t)(i % 200));
        if (p) memset(p, 1, 8);
        free(p);
    }
    printf("fsize: pairs=%ld\n", pairs);
    if (argc == 3) {
        struct rlimit rl;
        if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return 3;
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) return 4;
        static char buf[65536];
        for (rlim_t left = rl.rlim_cur; left > 0;) {
            size_t n = left < sizeof buf ? (size_t)left : sizeof buf;
            if (write(fd, buf, n) != (ssize_t)n) return 5;
            left -= n;
        }
        int e = write(fd, buf, 1) < 0 ? errno : 0;
        close(fd);
        printf("fsize: xfsz=%d errno=%s\n", (int)xfsz, e == EFBIG ? "EFBIG" : strerror(e));
    }
    return 0;
}
