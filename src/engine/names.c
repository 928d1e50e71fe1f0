/* names.c - the engine's enum <-> name helpers, configuration defaults and the worker counts
 * `auto` stands for. */
#include <sched.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "engine/engine.h"

static const char *const kind_names[KIND_COUNT] = {"porep", "snap", "window-post", "winning-post", "custom"};
static const char *const prio_names[PRIO_COUNT] = {"low", "normal", "high", "critical"};
static const char *const job_state_names[] = {"queued", "running", "done", "failed", "canceled"};
static const char *const part_state_names[] = {"queued", "admitted", "synth", "ready", "device",
                                               "finalize", "done", "failed", "canceled", "paused"};
static const char *const pause_names[PAUSE_COUNT] = {"none", "disk_full", "device_memory", "host_memory"};

const char *engine_kind_name(engine_kind k)
{
    return (unsigned)k < KIND_COUNT ? kind_names[k] : "unknown";
}

int engine_kind_from_name(const char *name, engine_kind *out)
{
    for (int i = 0; name && i < KIND_COUNT; i++)
        if (!strcasecmp(name, kind_names[i])) {
            *out = (engine_kind)i;
            return 0;
        }
    return -1;
}

const char *engine_priority_name(engine_priority p)
{
    return (unsigned)p < PRIO_COUNT ? prio_names[p] : "unknown";
}

int engine_priority_from_name(const char *name, engine_priority *out)
{
    for (int i = 0; name && i < PRIO_COUNT; i++)
        if (!strcasecmp(name, prio_names[i])) {
            *out = (engine_priority)i;
            return 0;
        }
    return -1;
}

engine_priority engine_kind_default_priority(engine_kind k)
{
    if (k == KIND_WINNING_POST)
        return PRIO_CRITICAL;
    if (k == KIND_WINDOW_POST)
        return PRIO_HIGH;
    return PRIO_NORMAL;
}

const char *engine_job_state_name(engine_job_state s)
{
    return (unsigned)s <= JOB_CANCELED ? job_state_names[s] : "unknown";
}

const char *engine_part_state_name(engine_part_state s)
{
    return (unsigned)s <= PART_PAUSED ? part_state_names[s] : "unknown";
}

const char *engine_pause_cause_name(engine_pause_cause c)
{
    return (unsigned)c < PAUSE_COUNT ? pause_names[c] : "unknown";
}

int engine_backend_from_name(const char *name, engine_backend_choice *out)
{
    static const char *const names[] = {"auto", "cpu", "gpu"};
    for (int i = 0; name && i < 3; i++)
        if (!strcasecmp(name, names[i])) {
            *out = (engine_backend_choice)i;
            return 0;
        }
    return -1;
}

void engine_config_defaults(engine_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->data_dir = "cuzk-data";
    cfg->budget_bytes = 0;
    cfg->backend = ENGINE_BACKEND_AUTO;
    cfg->gpu_workers = 2;
    cfg->synth_workers = 0; /* auto */
    cfg->finalizers = 0;    /* auto */
    cfg->queue_depth = 4;
    cfg->cpu_threads = 0;
    cfg->proof_ttl_s = 86400;
    cfg->fetch_grace_s = 600;
    cfg->batch_max = 10;
    cfg->min_free = ENGINE_MIN_FREE_DEFAULT;
    cfg->retry_max_ms = 30000;
}

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void engine_sizing_auto(int cores, int n_dev, int queue_depth, int *synth_workers, int *finalizers)
{
    cores = cores < 1 ? 1 : cores;
    n_dev = n_dev < 1 ? 1 : n_dev;
    queue_depth = queue_depth < 1 ? 1 : queue_depth;
    if (finalizers && *finalizers <= 0)
        *finalizers = clamp_int(cores / 8, 1, 2 * n_dev);
    if (synth_workers && *synth_workers <= 0) {
        int want = cores / 2 > 2 * n_dev ? cores / 2 : 2 * n_dev;
        int hi = queue_depth + 1 > 2 ? queue_depth + 1 : 2;
        *synth_workers = clamp_int(want, 2, hi);
    }
}

int engine_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}
