/* agent_stress.c - threads x fork x exec x dlopen at once, for a bounded
 * time: run by tests/integration/agent_stress.sh under the agent.
 *
 * usage: agent_stress EXEC_TARGET
 * Four threads allocate and free mixed sizes (one also dlopens and closes
 * a library over and over, never during a fork; one walks the loaded
 * objects with dl_iterate_phdr over and over) while the main thread
 * forks 12 children: even
 * ones allocate and exit(0), odd ones exec EXEC_TARGET. Prints
 * "children N" and exits 0 when every child exited 0.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS  4
#define CHILDREN 12

static atomic_bool stop;
/* dlopen and dlclose never run while the main thread forks: glibc 2.36
 * cannot fork safely then (the child inherits locks of the loader and of
 * the exit handlers held by a thread it does not have, and its exit()
 * hangs: 26 runs in 30 without the agent). dl_iterate_phdr can, and one
 * thread calls it all the time (as libunwind does inside the agent): the
 * children then start with the loader's module-list lock held by a thread
 * they do not have (tl_modules_fork_child). */
static pthread_rwlock_t dl_fork = PTHREAD_RWLOCK_INITIALIZER;

static void churn(uint64_t *rng, int rounds)
{
    void *ring[64] = {0};
    for (int i = 0; i < rounds; i++) {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        size_t k = *rng % 64, size = 16u << (*rng >> 20) % 14; /* 16 B .. 128 KiB */
        free(ring[k]);
        ring[k] = (*rng & 1) ? malloc(size) : calloc(1, size);
        if (ring[k]) ((char *)ring[k])[size - 1] = 1;
    }
    for (size_t k = 0; k < 64; k++)
        free(ring[k]);
}

static int count_one(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)info;
    (void)size;
    ++*(unsigned *)data;
    return 0;
}

static void *worker(void *arg)
{
    uint64_t rng = 0x9E3779B97F4A7C15u * ((uintptr_t)arg + 1);
    while (!atomic_load(&stop)) {
        churn(&rng, 200);
        if ((uintptr_t)arg == 0) {
            pthread_rwlock_rdlock(&dl_fork);
            void *h = dlopen("libresolv.so.2", RTLD_NOW | RTLD_LOCAL);
            if (h) dlclose(h);
            pthread_rwlock_unlock(&dl_fork);
        } else if ((uintptr_t)arg == 1) {
            for (int i = 0; i < 50; i++) {
                unsigned n = 0;
                dl_iterate_phdr(count_one, &n);
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2) return 2;
    pthread_t t[THREADS];
    for (uintptr_t i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    int bad = 0, n = 0;
    for (int c = 0; c < CHILDREN; c++) {
        usleep(20000);
        pthread_rwlock_wrlock(&dl_fork);
        pid_t pid = fork();
        if (pid != 0) pthread_rwlock_unlock(&dl_fork);
        if (pid == 0) {
            uint64_t rng = (uint64_t)c + 7;
            churn(&rng, 500);
            if (c & 1) {
                char *args[] = {argv[1], NULL};
                execv(argv[1], args); /* execl: not interposed yet (no END) */
                _exit(127);
            }
            exit(0);
        }
        if (pid < 0) {
            bad++;
            continue;
        }
        int st;
        if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) bad++;
        n++;
    }
    atomic_store(&stop, true);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    printf("children %d\n", n);
    return bad ? 1 : 0;
}
