/* view.c - plain-text views of /status and of one job (see view.h). Tolerant of
 * missing fields: anything absent prints as 0 or "-". */
#include "server/view.h"

#include <string.h>

#include "server/config.h"

static double num(json_t *o, const char *k)
{
    json_t *v = o ? json_object_get(o, k) : NULL;
    return json_is_number(v) ? json_number_value(v) : 0;
}

static const char *str(json_t *o, const char *k)
{
    json_t *v = o ? json_object_get(o, k) : NULL;
    return json_is_string(v) ? json_string_value(v) : "-";
}

static void bar(FILE *f, double frac, int w)
{
    if (frac < 0)
        frac = 0;
    if (frac > 1)
        frac = 1;
    int n = (int)(frac * w + 0.5);
    fputc('[', f);
    for (int i = 0; i < w; i++)
        fputc(i < n ? '#' : '.', f);
    fputc(']', f);
}

static void ms_text(char *out, size_t cap, double ms)
{
    if (ms < 1000)
        snprintf(out, cap, "%.0fms", ms);
    else if (ms < 120000)
        snprintf(out, cap, "%.1fs", ms / 1000);
    else
        snprintf(out, cap, "%.1fmin", ms / 60000);
}

static void partition_states(FILE *f, json_t *parts)
{
    /* one letter per partition: q a s r D f + x c p (queued admitted synth ready device
       finalize done failed canceled paused) */
    size_t i;
    json_t *p;
    json_array_foreach(parts, i, p)
    {
        const char *s = str(p, "state");
        char c = '?';
        if (!strcmp(s, "queued")) c = 'q';
        else if (!strcmp(s, "admitted")) c = 'a';
        else if (!strcmp(s, "synth")) c = 's';
        else if (!strcmp(s, "ready")) c = 'r';
        else if (!strcmp(s, "device")) c = 'D';
        else if (!strcmp(s, "finalize")) c = 'f';
        else if (!strcmp(s, "done")) c = '+';
        else if (!strcmp(s, "failed")) c = 'x';
        else if (!strcmp(s, "canceled")) c = 'c';
        else if (!strcmp(s, "paused")) c = 'p';
        fputc(c, f);
        if (i >= 63) {
            fputs("...", f);
            break;
        }
    }
}

void view_status(FILE *f, json_t *st, int width)
{
    if (width < 60)
        width = 60;
    json_t *srv = json_object_get(st, "server"), *proc = json_object_get(st, "process");
    char a[32], b[32], c[32];
    fprintf(f, "cuzk %s  backend %s  up %.0fs  devices %.0f\n", str(srv, "listen"),
            str(st, "backend"), num(st, "uptime_s"), num(st, "devices"));

    json_t *bu = json_object_get(st, "budget");
    double total = num(bu, "total"), used = num(bu, "used");
    size_format(a, sizeof a, (uint64_t)used);
    size_format(b, sizeof b, (uint64_t)total);
    size_format(c, sizeof c, (uint64_t)num(bu, "peak"));
    fprintf(f, "budget  ");
    bar(f, total > 0 ? used / total : 0, width - 60 > 10 ? width - 60 : 10);
    fprintf(f, " %s / %s (peak %s, %.0f waiting)\n", a, b, c, num(bu, "waiting"));
    size_format(a, sizeof a, (uint64_t)num(proc, "rss_bytes"));
    size_format(b, sizeof b, (uint64_t)num(proc, "peak_rss_bytes"));
    fprintf(f, "process RSS %s (peak %s)\n", a, b);

    json_t *gpus = json_object_get(st, "gpu");
    size_t i;
    json_t *g;
    json_array_foreach(gpus, i, g)
    {
        fprintf(f, "device %.0f ", num(g, "device"));
        bar(f, num(g, "busy_ratio_10s"), 20);
        fprintf(f, " busy %5.1f%% (10 s)  %5.1f%% (all)\n", 100 * num(g, "busy_ratio_10s"),
                100 * num(g, "busy_ratio"));
    }
    json_t *gaps = json_object_get(st, "idle_gap_ms");
    if (json_object_size(gaps)) {
        fprintf(f, "idle gaps:");
        const char *k;
        json_t *v;
        json_object_foreach(gaps, k, v)
        {
            ms_text(a, sizeof a, json_is_number(v) ? json_number_value(v) : 0);
            fprintf(f, " %s %s", k, a);
        }
        fputc('\n', f);
    }
    json_t *q = json_object_get(st, "queues"), *jc = json_object_get(st, "jobs");
    fprintf(f, "queues: scheduler %.0f  device %.0f/%.0f  finalize %.0f   jobs: queued %.0f running "
               "%.0f done %.0f failed %.0f canceled %.0f\n",
            num(q, "scheduler"), num(q, "ready"), num(q, "ready_limit"), num(q, "finalize"),
            num(jc, "queued"), num(jc, "running"), num(jc, "done"), num(jc, "failed"),
            num(jc, "canceled"));
    /* partitions waiting out a transient fault (engine_pause.c), by cause */
    json_t *pz = json_object_get(st, "paused");
    if (num(pz, "total") > 0) {
        ms_text(a, sizeof a, num(pz, "next_retry_ms"));
        fprintf(f, "PAUSED: %.0f partition(s) wait out a transient fault (disk_full %.0f, device_memory %.0f, "
                   "host_memory %.0f); next retry in %s\n  last: %s\n",
                num(pz, "total"), num(pz, "disk_full"), num(pz, "device_memory"), num(pz, "host_memory"), a,
                str(pz, "last_error"));
    }
    json_t *buf = json_object_get(st, "buffers");
    char pb[32];
    size_format(a, sizeof a, (uint64_t)num(buf, "pool_bytes"));
    size_format(pb, sizeof pb, (uint64_t)num(buf, "pinned_bytes"));
    fprintf(f, "buffers: pool %s (pinned %s)  allocs %.0f  reuses %.0f  free %.0f\n", a, pb, num(buf, "allocs"),
            num(buf, "reuses"), num(buf, "free"));

    /* several hosts on one store: each with its devices' busy share, leases and heartbeat age */
    json_t *fl = json_object_get(st, "fleet");
    json_t *hs = json_object_get(fl, "hosts");
    if (json_is_object(fl)) {
        fprintf(f, "\nfleet: this host %s, lease %.0f s, %.0f leases held, %.0f claims, %.0f late commits refused\n",
                str(fl, "host"), num(fl, "lease_s"), num(fl, "leases_held"), num(fl, "claims"),
                num(fl, "late_commits_refused"));
        fprintf(f, "%-24s %-22s %4s %6s %6s %5s %9s\n", "HOST", "ADDRESS", "DEV", "BUSY", "LEASES", "KEYS",
                "HEARTBEAT");
        json_t *h;
        json_array_foreach(hs, i, h)
        {
            char age[32];
            snprintf(age, sizeof age, "%.1fs ago", num(h, "heartbeat_age_s"));
            fprintf(f, "%-24s %-22s %4.0f %5.1f%% %6.0f %5zu %9s%s\n", str(h, "id"), str(h, "address"),
                    num(h, "devices"), 100 * num(h, "busy"), num(h, "leases"),
                    json_array_size(json_object_get(h, "keys")), age,
                    json_is_true(json_object_get(h, "self")) ? "  (this host)" : "");
        }
    }

    json_t *ws = json_object_get(st, "workers");
    if (json_array_size(ws)) {
        fprintf(f, "\n%-14s %-9s %-6s %-10s %-16s %10s %6s\n", "WORKER", "KIND", "DEVICE", "STATE",
                "PARTITION", "BUSY", "DONE");
        json_t *w;
        json_array_foreach(ws, i, w)
        {
            json_t *dv = json_object_get(w, "device");
            char dev[16] = "-";
            if (json_is_integer(dv) && json_integer_value(dv) >= 0)
                snprintf(dev, sizeof dev, "%lld", (long long)json_integer_value(dv));
            ms_text(a, sizeof a, num(w, "busy_ms"));
            json_t *pv = json_object_get(w, "partition");
            fprintf(f, "%-14s %-9s %-6s %-10s %-16s %10s %6.0f\n", str(w, "name"), str(w, "kind"),
                    dev, str(w, "state"), json_is_string(pv) ? json_string_value(pv) : "-", a,
                    num(w, "jobs_done"));
        }
    }
    json_t *act = json_object_get(st, "active");
    if (json_array_size(act)) {
        fprintf(f, "\n%-12s %-13s %-9s %-9s %-7s %s\n", "JOB", "KIND", "PRIORITY", "STATE", "DONE",
                "PARTITIONS (q a s r D f + x c p)");
        json_t *j;
        json_array_foreach(act, i, j)
        {
            char done[24];
            snprintf(done, sizeof done, "%.0f/%.0f", num(j, "n_done"), num(j, "n_partitions"));
            fprintf(f, "%-12s %-13s %-9s %-9s %-7s ", str(j, "id"), str(j, "kind"),
                    str(j, "priority"), str(j, "state"), done);
            partition_states(f, json_object_get(j, "partitions"));
            const char *e = str(j, "error");
            if (strcmp(e, "-") && e[0])
                fprintf(f, "  (%s)", e);
            fputc('\n', f);
        }
    }
}

void view_job(FILE *f, json_t *j)
{
    fprintf(f, "job %s  kind %s  priority %s  state %s  %.0f/%.0f partitions done\n", str(j, "id"),
            str(j, "kind"), str(j, "priority"), str(j, "state"), num(j, "n_done"),
            num(j, "n_partitions"));
    const char *e = str(j, "error");
    if (strcmp(e, "-") && e[0])
        fprintf(f, "error: %s\n", e);
    fprintf(f, "zkey: %s\n", str(j, "zkey"));
    json_t *parts = json_object_get(j, "partitions");
    if (!json_array_size(parts))
        return;
    static const char *const stages[] = {"queued_ms", "admit_ms", "synth_ms",
                                         "ready_ms", "device_ms", "finalize_ms"};
    fprintf(f, "%-5s %-9s %-4s %9s %9s %9s %9s %9s %9s  %s\n", "PART", "STATE", "TRY", "QUEUED",
            "ADMITTED", "SYNTH", "READY", "DEVICE", "FINALIZE", "ERROR / HOST");
    size_t i;
    json_t *p;
    json_array_foreach(parts, i, p)
    {
        json_t *s = json_object_get(p, "stages");
        fprintf(f, "%-5.0f %-9s %-4.0f", num(p, "index"), str(p, "state"), num(p, "attempts"));
        for (int k = 0; k < 6; k++) {
            char t[32];
            ms_text(t, sizeof t, num(s, stages[k]));
            fprintf(f, " %9s", t);
        }
        const char *pe = str(p, "error"), *ph = str(p, "host");
        if (!strcmp(str(p, "state"), "paused")) {
            char t[32];
            ms_text(t, sizeof t, num(p, "retry_in_ms"));
            fprintf(f, "  paused (%s, retry in %s): %s\n", str(p, "cause"), t, strcmp(pe, "-") ? pe : "");
        } else {
            fprintf(f, "  %s%s%s\n", strcmp(pe, "-") ? pe : "", strcmp(ph, "-") ? "proved by " : "",
                    strcmp(ph, "-") ? ph : "");
        }
    }
}
