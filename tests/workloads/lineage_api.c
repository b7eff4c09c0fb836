/* lineage_api.c - calls every function of include/tensorleak.h's lineage API
 * (and the rest of the agent's table through tl__api()) with known values,
 * for tests/integration/agent_api.sh. Without the agent every call is a
 * no-op and it prints "api none"; under it, "api v1". Exits 0 either way.
 * Prints the addresses and the XXH3-64 of the 8 KiB storage for the script.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "tensorleak.h"

#define POOL_BYTES 8192
#define COPY_BYTES 4096

static unsigned char *pool;

static void *tag_from_thread(void *arg)
{
    (void)arg;
    tl_tag(pool, "from_thread");
    return NULL;
}

int main(void)
{
    pool = malloc(POOL_BYTES);
    unsigned char *dst = malloc(COPY_BYTES);
    if (!pool || !dst) return 1;
    for (size_t i = 0; i < POOL_BYTES; i++)
        pool[i] = (unsigned char)(i * 7 + 3);
    char long_tag[301];
    memset(long_tag, 'x', 300);
    long_tag[300] = '\0';
    void *view = (void *)(uintptr_t)0x1234;

    tl_storage_register(pool, POOL_BYTES, "my_pool"); /* SITE:register */
    tl_view_begin(view, pool, 64, 256, 512, "slice"); /* SITE:view */
    memcpy(dst, pool, COPY_BYTES);
    tl_copy(dst, pool, COPY_BYTES, "clone");
    tl_copy(dst, pool, COPY_BYTES, NULL);
    tl_tag(pool, "weights");
    tl_tag(pool, long_tag);
    tl_region_begin("step");
    tl_region_end("step");
    tl_region_begin(NULL);
    tl_region_end(NULL);
    pthread_t th;
    if (pthread_create(&th, NULL, tag_from_thread, NULL) == 0) pthread_join(th, NULL);
    tl_snapshot("checkpoint");

    const tl_agent_api_t *a = tl__api();
    uint64_t mark = 0;
    if (a) {
        a->origin(dst, "my_op");
        mark = a->snapshot_begin("manual");
        a->snapshot_hold(mark, pool, POOL_BYTES, TL_HELD_BY_VIEW, (void *)(uintptr_t)0x55);
        a->snapshot_hold(mark, dst, COPY_BYTES, TL_HELD_BY_TENSOR, NULL);
        a->snapshot_hold(mark, dst, COPY_BYTES, 99, NULL); /* unknown held_by: 0 */
        a->snapshot_view(mark, pool, 64, 256, 512, (void *)(uintptr_t)0x66, "slice");
        a->snapshot_end(mark);
        a->snapshot_hold(0, pool, POOL_BYTES, TL_HELD_BY_TENSOR, NULL); /* no snapshot: nothing */
    }
    tl_view_end(view);
    tl_storage_unregister(pool);

    printf("api %s\n", a ? "v1" : "none");
    printf("trace %s\n", a && a->trace_path() ? a->trace_path() : "(none)");
    printf("pool %p\n", (void *)pool);
    printf("dst %p\n", (void *)dst);
    printf("mark %llu\n", (unsigned long long)mark);
    printf("hash 0x%llx\n", (unsigned long long)XXH3_64bits(pool, POOL_BYTES));
    free(dst);
    free(pool);
    return 0;
}
