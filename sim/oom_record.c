#include "oom_record.h"

#include <stdio.h>

void oom_record_classify(sim_oom_record *rec, const device *dev, uint32_t proc, uint64_t context_bytes,
                         uint64_t live_requested, const char *tag)
{
    device_info info = device_get_info(dev);
    uint64_t others = 0, alive = 0;
    uint32_t n_others = 0;
    for (uint32_t i = 0; i < device_proc_count(dev); i++) {
        if (!device_proc_alive(dev, i))
            continue;
        alive++;
        if (i != proc) {
            others += device_proc_held(dev, i);
            n_others++;
        }
    }
    uint64_t contexts = alive * context_bytes;
    uint64_t own_room = info.capacity_bytes > context_bytes ? info.capacity_bytes - context_bytes : 0;
    rec->live_requested_bytes = live_requested;
    /* no process may use more than capacity − its context, whatever its allocator's limit */
    rec->usable_bytes = rec->info.usable_bytes && rec->info.usable_bytes < own_room ? rec->info.usable_bytes : own_room;
    rec->other_processes_bytes = others;
    rec->other_processes = n_others;
    rec->contexts_bytes = contexts;
    rec->capacity_bytes = info.capacity_bytes;
    rec->peak_demand_bytes = rec->live_requested_bytes + rec->size; /* raised at the end of the run */
    oom_record_judge(rec);
    snprintf(rec->tag, sizeof rec->tag, "%s", tag ? tag : "");
}

void oom_record_judge(sim_oom_record *rec)
{
    uint64_t shared_room = rec->capacity_bytes > rec->contexts_bytes ? rec->capacity_bytes - rec->contexts_bytes : 0;
    uint64_t need = rec->peak_demand_bytes; /* sizes are below 2^53: sums of a few cannot overflow */
    if (need > rec->usable_bytes)
        rec->cause = SIM_OOM_CAPACITY;
    else if (need + rec->other_processes_bytes > shared_room)
        rec->cause = SIM_OOM_OTHER_PROCESSES;
    else
        rec->cause = SIM_OOM_FRAGMENTATION;
}

static int count_free_piece(void *ctx, const strategy_block *b)
{
    if (b->state == BLOCK_FREE)
        ++*(uint64_t *)ctx;
    return 0;
}

void oom_record_describe(sim_oom_record *rec, const strategy_ops *ops, const strategy *s, const idmap *m)
{
    ops->walk(s, count_free_piece, &rec->free_pieces);
    uint32_t n = 0;
    for (uint64_t i = 0; i <= m->mask; i++) {
        const idmap_entry *ent = &m->slots[i];
        if (!(ent->flags & IDMAP_USED) || (ent->flags & IDMAP_DROPPED) || ent->id == rec->id)
            continue;
        /* insertion into a list of at most SIM_OOM_LARGEST_LIVE, largest first, ties by id */
        uint32_t at = n;
        while (at > 0 && (rec->largest_live[at - 1].size < ent->size ||
                          (rec->largest_live[at - 1].size == ent->size && rec->largest_live[at - 1].id > ent->id)))
            at--;
        if (at >= SIM_OOM_LARGEST_LIVE)
            continue;
        uint32_t last = n < SIM_OOM_LARGEST_LIVE ? n : SIM_OOM_LARGEST_LIVE - 1;
        for (uint32_t j = last; j > at; j--)
            rec->largest_live[j] = rec->largest_live[j - 1];
        rec->largest_live[at] = (sim_oom_live){.id = ent->id, .size = ent->size};
        if (n < SIM_OOM_LARGEST_LIVE)
            n++;
    }
    rec->n_largest_live = n;
}
