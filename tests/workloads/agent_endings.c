/* agent_endings.c - ends its image in the way argv[1] names, after leaking
 * one 5555 B block, for agent_endings.sh. Modes: quick_exit (status 3),
 * execl, execle, execlp, fexecve (argv[2] is the program exec'd: it runs
 * with no arguments), posix_spawn, posix_spawnp (argv[2] is spawned, waited
 * for, and this image exits 0 after leaking a second, 6666 B block),
 * sigterm (prints the SIGTERM disposition it sees, then SIGTERMs itself),
 * sigterm_own (installs its own SIGTERM handler with signal(), which prints
 * and exits 0, and SIGTERMs itself), sigint (sets SIGINT to SIG_DFL with
 * signal(), as CPython does before it kills itself on an uncaught
 * KeyboardInterrupt and whatever the shell left it at, prints the
 * disposition it then sees, and SIGINTs itself), sigint_vfork (the same
 * after a handler of its own and a vfork child that set SIGINT to SIG_DFL,
 * as CPython's subprocess does in the child). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static void *volatile keep[2]; /* volatile: the stores must happen */

static void after_quick_exit(void)
{
    static const char msg[] = "at_quick_exit ran\n";
    if (write(1, msg, sizeof msg - 1) < 0) _exit(9);
}

static void on_term(int sig)
{
    static const char msg[] = "own handler ran\n";
    if (write(1, msg, sizeof msg - 1) < 0 || sig != SIGTERM) _exit(9);
    exit(0);
}

static void on_int(int sig)
{
    static const char msg[] = "own SIGINT handler ran\n";
    if (write(1, msg, sizeof msg - 1) < 0 || sig != SIGINT) _exit(9);
}

int main(int argc, char **argv)
{
    if (argc < 2) return 2;
    const char *mode = argv[1];
    const char *prog = argc > 2 ? argv[2] : "/bin/true";
    keep[0] = malloc(5555);
    printf("endings %d\n", (int)getpid());
    fflush(stdout);
    if (!strcmp(mode, "quick_exit")) {
        at_quick_exit(after_quick_exit);
        quick_exit(3);
    } else if (!strcmp(mode, "execl")) {
        execl(prog, prog, (char *)NULL);
    } else if (!strcmp(mode, "execle")) {
        execle(prog, prog, (char *)NULL, environ);
    } else if (!strcmp(mode, "execlp")) {
        execlp(prog, prog, (char *)NULL);
    } else if (!strcmp(mode, "fexecve")) {
        int fd = open(prog, O_RDONLY | O_CLOEXEC);
        char *args[] = {(char *)prog, NULL};
        if (fd >= 0) fexecve(fd, args, environ);
    } else if (!strcmp(mode, "posix_spawn") || !strcmp(mode, "posix_spawnp")) {
        char *args[] = {(char *)prog, NULL};
        pid_t pid;
        int err = mode[11] == 'p' ? posix_spawnp(&pid, prog, NULL, NULL, args, environ)
                                  : posix_spawn(&pid, prog, NULL, NULL, args, environ);
        if (err) return 4;
        int status;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return 5;
        printf("spawned %d exited %d\n", (int)pid, WEXITSTATUS(status));
        keep[1] = malloc(6666);
        return 0;
    } else if (!strcmp(mode, "sigterm")) {
        struct sigaction old;
        if (sigaction(SIGTERM, NULL, &old) != 0) return 6;
        printf("SIGTERM %s flags %d\n", old.sa_handler == SIG_DFL ? "default" : "handled",
               old.sa_flags);
        fflush(stdout);
        kill(getpid(), SIGTERM);
        pause();
    } else if (!strcmp(mode, "sigint") || !strcmp(mode, "sigint_vfork")) {
        if (mode[6]) { /* sigint_vfork */
            signal(SIGINT, on_int);
            pid_t pid = vfork();
            if (pid == 0) {
                signal(SIGINT, SIG_DFL);
                _exit(0);
            }
            int status;
            if (pid < 0 || waitpid(pid, &status, 0) != pid) return 7;
        }
        struct sigaction old;
        void (*prev)(int) = signal(SIGINT, SIG_DFL);
        if (prev == SIG_ERR || sigaction(SIGINT, NULL, &old) != 0) return 6;
        printf("SIGINT %s flags %d\n", old.sa_handler == SIG_DFL ? "default" : "handled",
               old.sa_flags);
        fflush(stdout);
        kill(getpid(), SIGINT); /* delivered before kill returns: alive, it was not fatal */
        printf("survived SIGINT\n");
        return 1;
    } else if (!strcmp(mode, "sigterm_own")) {
        void (*prev)(int) = signal(SIGTERM, on_term);
        printf("previous %s\n", prev == SIG_DFL ? "default" : "other");
        fflush(stdout);
        kill(getpid(), SIGTERM);
        pause();
    } else {
        return 2;
    }
    perror(mode);
    return 1;
}
