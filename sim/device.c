#include "device.h"

#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "units.h"

typedef struct device_proc {
    uint64_t held;
    bool alive;
    sim_range *plan;   /* device_plan_va: the addresses its next device_alloc calls get */
    uint32_t n_plan, next_plan;
} device_proc;

struct device {
    device_info info;
    char name[64];
    uint64_t next_addr;   /* highest end of any range handed out so far */
    uint64_t used;        /* contexts + held of live processes */
    uint64_t failures;    /* device_map/device_alloc calls refused for want of memory */
    device_proc *procs;
    uint32_t n_procs, cap_procs;
};

device *device_new(const device_info *info)
{
    device *dev = calloc(1, sizeof *dev);
    if (dev == NULL)
        return NULL;
    dev->info = *info;
    strncpy(dev->name, info->name ? info->name : "custom", sizeof dev->name - 1);
    dev->info.name = dev->name;
    /* Start above zero so that no block ever sits at address 0. */
    dev->next_addr = DEVICE_ADDR_ALIGN;
    return dev;
}

void device_free(device *dev)
{
    if (dev == NULL)
        return;
    for (uint32_t i = 0; i < dev->n_procs; i++)
        free(dev->procs[i].plan);
    free(dev->procs);
    free(dev);
}

device_info device_get_info(const device *dev)
{
    return dev->info;
}

uint32_t device_proc_start(device *dev)
{
    if (!SIM_GROW(dev->procs, dev->n_procs + 1, dev->cap_procs))
        return UINT32_MAX;
    uint32_t id = dev->n_procs++;
    dev->procs[id] = (device_proc){.held = 0, .alive = true};
    dev->used += dev->info.context_bytes;
    return id;
}

void device_proc_exit(device *dev, uint32_t proc)
{
    device_proc *p = &dev->procs[proc];
    if (!p->alive)
        return;
    dev->used -= p->held + dev->info.context_bytes;
    p->held = 0;
    p->alive = false;
}

bool device_proc_alive(const device *dev, uint32_t proc)
{
    return proc < dev->n_procs && dev->procs[proc].alive;
}

uint32_t device_proc_count(const device *dev)
{
    return dev->n_procs;
}

uint64_t device_free_bytes(const device *dev)
{
    return dev->used >= dev->info.capacity_bytes ? 0 : dev->info.capacity_bytes - dev->used;
}

uint64_t device_proc_held(const device *dev, uint32_t proc)
{
    return dev->procs[proc].held;
}

uint64_t device_used_bytes(const device *dev)
{
    return dev->used;
}

uint64_t device_reserve_va(device *dev, uint64_t bytes)
{
    uint64_t base = units_round_up(dev->next_addr, DEVICE_ADDR_ALIGN);
    dev->next_addr = base + bytes;
    return base;
}

void device_claim_va(device *dev, uint64_t end)
{
    if (end > dev->next_addr)
        dev->next_addr = end;
}

sim_status device_map(device *dev, uint32_t proc, uint64_t bytes)
{
    device_proc *p = &dev->procs[proc];
    if (!p->alive || bytes > device_free_bytes(dev)) {
        dev->failures++;
        return SIM_OOM;
    }
    p->held += bytes;
    dev->used += bytes;
    return SIM_OK;
}

bool device_plan_va(device *dev, uint32_t proc, const sim_range *plan, uint32_t n)
{
    device_proc *p = &dev->procs[proc];
    free(p->plan);
    p->plan = NULL;
    p->n_plan = p->next_plan = 0;
    if (n == 0)
        return true;
    p->plan = malloc(n * sizeof *p->plan);
    if (p->plan == NULL)
        return false;
    memcpy(p->plan, plan, n * sizeof *plan);
    p->n_plan = n;
    for (uint32_t i = 0; i < n; i++)
        device_claim_va(dev, plan[i].addr + plan[i].bytes);
    return true;
}

sim_status device_alloc(device *dev, uint32_t proc, uint64_t bytes, uint64_t *addr_out)
{
    sim_status st = device_map(dev, proc, bytes);
    if (st != SIM_OK)
        return st;
    device_proc *p = &dev->procs[proc];
    if (p->next_plan < p->n_plan) {
        if (p->plan[p->next_plan].bytes == bytes) {
            *addr_out = p->plan[p->next_plan++].addr;
            return SIM_OK;
        }
        p->next_plan = p->n_plan; /* the replay went another way: fresh bases from now on */
    }
    *addr_out = device_reserve_va(dev, bytes);
    return SIM_OK;
}

void device_release(device *dev, uint32_t proc, uint64_t bytes)
{
    device_proc *p = &dev->procs[proc];
    if (!p->alive)
        return; /* the process already exited: its memory went back then */
    p->held -= bytes;
    dev->used -= bytes;
}

uint64_t device_failures(const device *dev)
{
    return dev->failures;
}
