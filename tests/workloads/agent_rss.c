/* agent_rss.c - what the program sees of its own resident memory (issue 9).
 * usage: agent_rss PAIRS [kill]
 * Keeps a ring of 8192 live blocks of 8-199 B (under 1 MiB of its own
 * data) and replaces one per step, PAIRS times, then prints
 * "rss: kib=K", its VmRSS from /proc/self/status. With `kill` it then
 * kills itself with SIGKILL instead of freeing the ring and exiting.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 8192

int main(int argc, char **argv)
{
    long pairs = argc > 1 ? atol(argv[1]) : 1000000;
    static void *ring[RING];
    for (long i = 0; i < pairs; i++) {
        size_t k = (size_t)i % RING;
        free(ring[k]);
        ring[k] = malloc(8 + (size_t)(i * 7919 % 192));
        if (ring[k]) memset(ring[k], 1, 8);
    }
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = atol(line + 6);
    if (f) fclose(f);
    if (argc > 2 && strcmp(argv[2], "kill") == 0) {
        printf("rss: kib=%ld\n", kib);
        fflush(stdout);
        raise(SIGKILL);
    }
    for (size_t k = 0; k < RING; k++)
        free(ring[k]);
    printf("rss: kib=%ld\n", kib);
    return kib < 0;
}
