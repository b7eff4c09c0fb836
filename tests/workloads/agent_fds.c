/* agent_fds.c - a program that owns every descriptor above 2 (issue 9):
 * closes them all (as daemons and closefrom(3) do), opens NFILES files of
 * its own in DIR, writes a known pattern into each with allocations (and
 * so stack unwinds and trace growth) in between, reads each back through
 * its own descriptor, dup2s one file onto every other number it holds, and
 * checks that /proc/self/fd lists exactly its own descriptors. Then it
 * forks and execs itself with --list: that image prints the descriptors it
 * inherited, which must be 0-2 and the one file left inheritable.
 * usage: agent_fds DIR | agent_fds --list
 * Prints "fds: ok" or a "fds: ..." line saying what went wrong (exit 1).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define NFILES     8
#define FILE_BYTES (64 * 1024)
#define INHERIT    3 /* files[INHERIT] is opened without O_CLOEXEC */

static char pattern(size_t i, int f)
{
    return (char)('A' + (i + (size_t)f) % 26);
}

/* Allocations from a few stack depths: the agent unwinds and writes. */
static void __attribute__((noinline)) churn(int depth, int n)
{
    if (depth > 0) {
        churn(depth - 1, n);
        return;
    }
    for (int i = 0; i < n; i++) {
        void *p = malloc(16 + (size_t)(i % 512));
        if (p) memset(p, 1, 16);
        free(p);
    }
}

/* The open descriptors, ascending, into fds; returns how many. */
static int list_fds(int *fds, int max)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d) return -1;
    int self = dirfd(d), n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        if (e->d_name[0] == '.') continue;
        int fd = atoi(e->d_name);
        if (fd != self) fds[n++] = fd;
    }
    closedir(d);
    for (int i = 1; i < n; i++) /* insertion sort */
        for (int j = i; j > 0 && fds[j - 1] > fds[j]; j--) {
            int t = fds[j];
            fds[j] = fds[j - 1];
            fds[j - 1] = t;
        }
    return n;
}

static int bad(const char *what, int f)
{
    printf("fds: %s (file %d)\n", what, f);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        int fds[64], n = list_fds(fds, 64);
        printf("inherited:");
        for (int i = 0; i < n; i++)
            printf(" %d", fds[i]);
        printf("\n");
        return 0;
    }
    if (argc != 2) return 2;
    struct rlimit rl;
    int maxfd =
        getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int)rl.rlim_cur : 65536;
    for (int fd = 3; fd < maxfd; fd++)
        close(fd);
    churn(3, 1000); /* the agent's first records after the descriptors went away */

    int fd[NFILES];
    char path[NFILES][4096];
    static char buf[FILE_BYTES], back[FILE_BYTES];
    for (int f = 0; f < NFILES; f++) {
        snprintf(path[f], sizeof path[f], "%s/own%d", argv[1], f);
        fd[f] = open(path[f], O_RDWR | O_CREAT | O_TRUNC | (f == INHERIT ? 0 : O_CLOEXEC), 0600);
        if (fd[f] != 3 + f) return bad("open did not give the lowest number", f);
    }
    for (int f = 0; f < NFILES; f++) {
        for (size_t i = 0; i < FILE_BYTES; i++)
            buf[i] = pattern(i, f);
        for (size_t off = 0; off < FILE_BYTES; off += 4096) {
            if (write(fd[f], buf + off, 4096) != 4096) return bad("short write", f);
            churn(f % 4, 2000);
        }
        /* Read back through the same descriptor, allocating in between. */
        if (lseek(fd[f], 0, SEEK_SET) != 0) return bad("lseek", f);
        for (size_t off = 0; off < FILE_BYTES; off += 4096) {
            churn(2, 500);
            if (read(fd[f], back + off, 4096) != 4096) return bad("short read", f);
        }
        if (memcmp(buf, back, FILE_BYTES) != 0) return bad("read back other bytes", f);
    }
    /* dup2 file 0 onto the other numbers (those an agent might have used). */
    for (int f = 1; f < NFILES; f++)
        if (f != INHERIT && dup2(fd[0], fd[f]) != fd[f]) return bad("dup2", f);
    churn(3, 20000);
    int fds[64], n = list_fds(fds, 64);
    if (n != 3 + NFILES) {
        printf("fds: /proc/self/fd lists %d descriptors:", n);
        for (int i = 0; i < n; i++)
            printf(" %d", fds[i]);
        printf("\n");
        return 1;
    }
    for (int i = 0; i < n; i++)
        if (fds[i] != i) return bad("an unexpected descriptor", fds[i]);
    for (int f = 0; f < NFILES; f++)
        if (f != 0 && f != INHERIT) close(fd[f]);
    /* Every file as written: size and bytes. */
    for (int f = 0; f < NFILES; f++) {
        int r = open(path[f], O_RDONLY | O_CLOEXEC);
        for (size_t i = 0; i < FILE_BYTES; i++)
            buf[i] = pattern(i, f);
        ssize_t got = read(r, back, FILE_BYTES);
        char extra;
        if (got != FILE_BYTES || read(r, &extra, 1) != 0) return bad("file size changed", f);
        if (memcmp(buf, back, FILE_BYTES) != 0) return bad("file bytes changed", f);
        close(r);
    }
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/proc/self/exe", argv[0], "--list", (char *)NULL);
        _exit(127);
    }
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        return bad("the --list child failed", 0);
    printf("fds: ok\n");
    return 0;
}
