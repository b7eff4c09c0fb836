/* stackdelta.c - a STACK_DELTA record's frames, at the load and later
 * (stackdelta.h). Every length and id of the records is checked: a trace
 * is untrusted.
 */
#include "report/read/stackdelta.h"

#include <string.h>

/* Edit base frames f[0, *n) in place into the stack of delta rec (its new
 * frames in rec->u.stack.frames, not in f). false, f untouched: the edit
 * does not fit the base or TL_REC_MAX_FRAMES. */
static bool apply(uint64_t *f, size_t *n, const tl_record_t *rec)
{
    uint64_t nb = *n, head = rec->u.stack.head, tail = rec->u.stack.tail;
    uint64_t nn = rec->u.stack.nframes;
    if (nb > TL_REC_MAX_FRAMES || head > nb || tail > nb - head ||
        nn > TL_REC_MAX_FRAMES - head - tail)
        return false;
    memmove(f + head + nn, f + nb - tail, tail * sizeof *f);
    memcpy(f + head, rec->u.stack.frames, nn * sizeof *f);
    *n = head + nn + tail;
    return true;
}

void tl_stack_take(tl_trace_t *t, tl_site_t *s, const tl_record_t *rec, tl_stack_memo_t *memo)
{
    const uint64_t *f = rec->u.stack.frames;
    size_t n = rec->u.stack.nframes;
    if (rec->type == TL_REC_STACK_DELTA) {
        if (!rec->u.stack.base || memo->id != rec->u.stack.base ||
            memo->depth >= TL_STACK_CHAIN_MAX || !apply(memo->frames, &memo->n, rec)) {
            s->pending = true; /* tl_stack_fix follows its chain */
            t->nstack_pending++;
            memo->id = 0;
            return;
        }
        f = memo->frames;
        n = memo->n;
        memo->depth++;
    } else {
        memcpy(memo->frames, f, n * sizeof *f);
        memo->n = n;
        memo->depth = 0;
    }
    memo->id = rec->u.stack.id;
    s->nframes = (uint32_t)n;
    s->frames_key = tl_frames_key(f, n);
}

/* Site s's record into rec, its frames into f (TL_REC_MAX_FRAMES). false:
 * no record, or not a stack record of s's id. */
static bool decode_site(const tl_trace_t *t, const tl_site_t *s, tl_record_t *rec, uint64_t *f)
{
    if (!s->defined || !s->rec) return false;
    /* a compressed trace's stack records are copies (reader.h, zstacks) */
    const uint8_t *end = t->hdr.compressed ? t->zstacks + t->zstacks_len : t->buf + t->buf_len;
    tl_rec_state_t st = {0};
    return tl_rec_decode(s->rec, (size_t)(end - s->rec), rec, f, &st) > 0 &&
           (rec->type == TL_REC_STACK || rec->type == TL_REC_STACK_DELTA) &&
           rec->u.stack.id == s->stack_id;
}

bool tl_stack_resolve(const tl_trace_t *t, const tl_site_t *s, uint64_t *out, size_t *n)
{
    tl_record_t rec;                   /* about 5 KiB */
    uint64_t fresh[TL_REC_MAX_FRAMES]; /* a delta's new frames */
    const tl_site_t *chain[TL_STACK_CHAIN_MAX];
    size_t depth = 0;
    for (;;) { /* down to the full STACK; ids fall at each step */
        if (!decode_site(t, s, &rec, out)) return false;
        if (rec.type == TL_REC_STACK) break;
        if (depth == TL_STACK_CHAIN_MAX || !rec.u.stack.base) return false;
        chain[depth++] = s;
        tl_map_entry_t *e = tl_map_get(&t->site_by_id, rec.u.stack.base);
        if (!e || e->a >= t->nsites) return false;
        s = &t->sites[e->a];
    }
    *n = rec.u.stack.nframes;
    while (depth-- > 0) /* and back up, each delta on the stack below it */
        if (!decode_site(t, chain[depth], &rec, fresh) || !apply(out, n, &rec)) return false;
    return true;
}

void tl_stack_fix(tl_trace_t *t)
{
    if (!t->nstack_pending) return;
    uint64_t f[TL_REC_MAX_FRAMES];
    for (size_t i = 0; i < t->nsites; i++) {
        tl_site_t *s = &t->sites[i];
        if (!s->pending) continue;
        s->pending = false;
        size_t n;
        if (tl_stack_resolve(t, s, f, &n)) {
            s->nframes = (uint32_t)n;
            s->frames_key = tl_frames_key(f, n);
        } else { /* as if no record defined it; its own deltas fail the same way */
            s->defined = false;
            s->rec = NULL;
        }
    }
    t->nstack_pending = 0;
}
