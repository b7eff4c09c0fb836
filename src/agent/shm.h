/* shm.h - shared-memory storages the lineage API registered (origin
 * "shared memory": a torch storage the program received over a
 * torch.multiprocessing queue, a DataLoader worker's batch), forgotten
 * and unregistered when the program unmaps them.
 *
 * torch maps such a storage with its MapAllocator, which no allocator hook
 * sees; the Python provider registers it when it is received
 * (_torch.wrap_received), and its end is the munmap of its mapping (the
 * storage's last reference gone). Without this the report would count it
 * live from its receipt to the end. At most TL_SHM_SLOTS at once: a
 * registration beyond them is unregistered at once (counted live only
 * if the end point's walk finds it), never left live for ever.
 * Thread-safe, lock-free; no allocation.
 */
#ifndef TL_AGENT_SHM_H
#define TL_AGENT_SHM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TL_SHM_SLOTS 4096 /* shared-memory storages registered at once */

/* A STORAGE_REG of base with origin "shared memory" was recorded: remember
 * base. true = failure: every slot is taken (the caller then unregisters it). */
bool tl_shm_on_register(uint64_t base);

/* The program unmapped [addr, addr + len): every remembered base in it is
 * forgotten and, when the agent records here (the guard is down), written
 * as a STORAGE_UNREG. Cheap when nothing is remembered. */
void tl_shm_on_munmap(const void *addr, size_t len);

#endif /* TL_AGENT_SHM_H */
