/* trace_chunk.c - chunk header validation and the walk over chunk slots
 * (see trace_chunk.h). No allocation, no output.
 */
#include "common/trace_chunk.h"

tl_chunk_state_t tl_chunk_parse(const uint8_t *c, uint64_t avail, uint32_t chunk_bytes,
                                tl_chunk_t *out)
{
    if (avail < TL_CHUNK_HEADER_BYTES) return TL_CHUNK_BAD;
    uint32_t magic = tl_load_le32(c + TL_CHK_MAGIC);
    if (magic == 0) return TL_CHUNK_UNUSED;
    if (magic != TL_CHUNK_MAGIC) return TL_CHUNK_BAD;
    uint32_t used = tl_load_le32(c + TL_CHK_USED);
    if (chunk_bytes <= TL_CHUNK_HEADER_BYTES || used > chunk_bytes - TL_CHUNK_HEADER_BYTES)
        return TL_CHUNK_BAD;
    uint64_t have = avail - TL_CHUNK_HEADER_BYTES;
    *out = (tl_chunk_t){.tid = tl_load_le32(c + TL_CHK_TID),
                        .seq = tl_load_le32(c + TL_CHK_SEQ),
                        .base_ts = tl_load_le64(c + TL_CHK_BASE_TS),
                        .data = c + TL_CHUNK_HEADER_BYTES,
                        .cut = have < used,
                        .len = (size_t)(have < used ? have : used)};
    return TL_CHUNK_OK;
}

void tl_chunk_iter_init(tl_chunk_iter_t *it, const uint8_t *buf, uint64_t size,
                        uint64_t header_bytes, uint64_t chunk_bytes, uint64_t declared)
{
    *it = (tl_chunk_iter_t){.buf = buf,
                            .size = size,
                            .header_bytes = header_bytes,
                            .chunk_bytes = chunk_bytes,
                            .declared = declared,
                            .truncated = size < header_bytes};
}

static bool all_zero(const uint8_t *p, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

bool tl_chunk_iter_next(tl_chunk_iter_t *it, tl_chunk_t *out)
{
    if (it->size < it->header_bytes) return false;
    while (it->declared == 0 || it->next < it->declared) {
        uint64_t ci = it->next;
        /* header_bytes <= 1 MiB and chunk_bytes <= 1 GiB: this only overflows
         * past 2^34 slots, which the size check rules out first. */
        uint64_t off = it->header_bytes + ci * it->chunk_bytes;
        if (off >= it->size) {
            if (it->declared != 0) it->truncated = true; /* the header promised more */
            break;
        }
        uint64_t avail = it->size - off;
        const uint8_t *c = it->buf + off;
        if (avail < TL_CHUNK_HEADER_BYTES) {
            if (it->declared != 0 || !all_zero(c, avail)) it->truncated = true;
            break;
        }
        it->next++;
        switch (tl_chunk_parse(c, avail, (uint32_t)it->chunk_bytes, out)) {
        case TL_CHUNK_OK:
            out->index = ci;
            if (out->cut) it->truncated = true;
            return true;
        case TL_CHUNK_UNUSED:
            continue;
        case TL_CHUNK_BAD:
            it->bad_chunks++;
            continue;
        }
    }
    it->next = UINT64_MAX; /* stays at the end */
    it->declared = UINT64_MAX;
    return false;
}
