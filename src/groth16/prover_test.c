/* prover_test.c - groth16_prove's use of a backend's optional msm_early (backend.h).
 *
 * The backend under test is the CPU backend's table with msm_early added and eval_abc, compute_h
 * and msm_all wrapped: msm_early "starts" early work by setting ws->early to a token, msm_all
 * takes it back (as the GPU backend joins its thread), a release drops it. Each wrapper logs its
 * call into a string, so the test sees the order of the calls and which step saw the token.
 * Oracle: the proof groth16_prove makes through the plain CPU backend with the same r and s,
 * which tests/data's snarkjs fixture ties to snarkjs (its vk verifies it).
 * Cases: a proof with early work (the order early, abc, h, msm; no release; the same proof as
 * without; groth16_times.early set); msm_early doing nothing (ws->early stays NULL: no release either); msm_early failing
 * (no step runs, its error is returned); eval_abc or compute_h failing after early work started
 * (one release, the step's error returned, nothing left running).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groth16/backend.h"
#include "groth16/formats.h"
#include "groth16/proof.h"
#include "groth16/prover.h"
#include "util/check.h"

typedef struct early_backend {
    cuzk_backend be;      /* the CPU backend's table, four entries replaced */
    cuzk_backend *cpu;
    char log[128];        /* one letter a call: E early, e early doing nothing, R release, A abc, H h, M msm */
    int start;            /* 1: msm_early starts work; 0: it does nothing; -1: it fails */
    int fail_abc, fail_h; /* 1: that step fails */
    int token;            /* what ws->early points to while work "runs" */
    int msm_saw_early;    /* msm_all found the token */
    int running;          /* early work started and not yet taken back or released */
} early_backend;

static void say(early_backend *f, char c)
{
    size_t n = strlen(f->log);
    if (n + 1 < sizeof f->log)
        f->log[n] = c, f->log[n + 1] = 0;
}

static cuzk_err eb_early(cuzk_backend *be, void *ks, groth16_ws *ws, int release, char *err)
{
    (void)ks;
    early_backend *f = (early_backend *)be;
    if (release) {
        say(f, 'R');
        CHECK(ws->early == &f->token, "a release without early work running");
        ws->early = NULL;
        f->running = 0;
        return CUZK_OK;
    }
    if (f->start < 0)
        return cuzk_errf(err, CUZK_EDEVICE, "early: the device is gone");
    say(f, f->start ? 'E' : 'e');
    if (f->start) {
        ws->early = &f->token;
        f->running = 1;
    }
    return CUZK_OK;
}

static cuzk_err eb_abc(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    early_backend *f = (early_backend *)be;
    say(f, 'A');
    if (f->fail_abc)
        return cuzk_errf(err, CUZK_EINVAL, "abc: planted failure");
    return f->cpu->eval_abc(f->cpu, ks, ws, err);
}

static cuzk_err eb_h(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    early_backend *f = (early_backend *)be;
    say(f, 'H');
    if (f->fail_h)
        return cuzk_errf(err, CUZK_ENOMEM, "h: planted failure");
    return f->cpu->compute_h(f->cpu, ks, ws, err);
}

static cuzk_err eb_msm(cuzk_backend *be, void *ks, groth16_ws *ws, char *err)
{
    early_backend *f = (early_backend *)be;
    say(f, 'M');
    if (ws->early) { /* the early work's results would be in ws->msm; here the CPU makes all */
        f->msm_saw_early = ws->early == &f->token;
        ws->early = NULL;
        f->running = 0;
    }
    return f->cpu->msm_all(f->cpu, ks, ws, err);
}

static void setup(early_backend *f, cuzk_backend *cpu, int start, int fail_abc, int fail_h)
{
    memset(f, 0, sizeof *f);
    f->be = *cpu;
    f->cpu = cpu;
    f->be.msm_early = eb_early;
    f->be.eval_abc = eb_abc;
    f->be.compute_h = eb_h;
    f->be.msm_all = eb_msm;
    f->start = start, f->fail_abc = fail_abc, f->fail_h = fail_h;
}

int main(int argc, char **argv)
{
    const char *root = argc > 1 ? argv[1] : "tests/data/bn128/merkle";
    char path[512], err[CUZK_ERRLEN];
    zkey_file z;
    wtns_file w;
    cuzk_vk vk;
    cuzk_public pub;
    snprintf(path, sizeof path, "%s/circuit.zkey", root);
    if (zkey_open(&z, path, err)) {
        CHECK(0, "%s: %s", path, err);
        return 1;
    }
    snprintf(path, sizeof path, "%s/witness.wtns", root);
    if (wtns_open(&w, path, err)) {
        CHECK(0, "%s: %s", path, err);
        zkey_close(&z);
        return 1;
    }
    snprintf(path, sizeof path, "%s/vk.json", root);
    CHECK(!vk_read_json(&vk, path, err), "%s: %s", path, err);
    snprintf(path, sizeof path, "%s/public.json", root);
    CHECK(!public_read_json(&pub, z.curve->id, path, err), "%s: %s", path, err);
    cuzk_backend *cpu = cpu_backend_create(z.curve->id, 2, err);
    void *ks = NULL;
    CHECK(cpu, "cpu backend: %s", err);
    if (!cpu || cpu->key_attach(cpu, &z, NULL, &ks, err)) {
        CHECK(0, "key_attach: %s", err);
        return 1;
    }
    groth16_rs rs;
    memset(&rs, 0, sizeof rs);
    rs.r[0] = 7, rs.r[3] = 1, rs.s[0] = 11, rs.s[5] = 2;
    cuzk_proof want, got;
    CHECK(!groth16_prove(&want, cpu, ks, &z, &w, &rs, err), "plain prove: %s", err);
    CHECK(!groth16_verify(&vk, &pub, &want, err), "the plain proof does not verify: %s", err);

    early_backend f;
    groth16_times t;
    setup(&f, cpu, 1, 0, 0);
    memset(&got, 0, sizeof got);
    memset(&t, 0, sizeof t);
    CHECK(!groth16_prove_timed(&got, &f.be, ks, &z, &w, &rs, NULL, 0, &t, err), "prove with early work: %s", err);
    CHECK(t.early == 1, "the times do not say that early work ran");
    CHECK(!strcmp(f.log, "EAHM"), "early work: calls %s, want EAHM (early before a/b/c, no release)", f.log);
    CHECK(f.msm_saw_early && !f.running, "msm_all did not take the early work back");
    CHECK(!memcmp(&got, &want, sizeof got), "the proof with early work differs from the plain one");

    setup(&f, cpu, 0, 0, 0);
    memset(&got, 0, sizeof got);
    t.early = 1;
    CHECK(!groth16_prove_timed(&got, &f.be, ks, &z, &w, &rs, NULL, 0, &t, err), "prove, early doing nothing: %s", err);
    CHECK(t.early == 0, "the times say that early work ran where none did");
    CHECK(!strcmp(f.log, "eAHM") && !f.msm_saw_early, "early doing nothing: calls %s, want eAHM", f.log);
    CHECK(!memcmp(&got, &want, sizeof got), "the proof (early doing nothing) differs from the plain one");

    setup(&f, cpu, -1, 0, 0);
    cuzk_err e = groth16_prove(&got, &f.be, ks, &z, &w, &rs, err);
    CHECK(e == CUZK_EDEVICE && strstr(err, "device is gone"), "early failing: %d %s", (int)e, err);
    CHECK(!strcmp(f.log, ""), "early failing: calls %s, want none", f.log);

    setup(&f, cpu, 1, 1, 0);
    e = groth16_prove(&got, &f.be, ks, &z, &w, &rs, err);
    CHECK(e == CUZK_EINVAL && strstr(err, "abc: planted"), "a/b/c failing: %d %s", (int)e, err);
    CHECK(!strcmp(f.log, "EAR") && !f.running, "a/b/c failing: calls %s, want EAR (one release)", f.log);

    setup(&f, cpu, 1, 0, 1);
    e = groth16_prove(&got, &f.be, ks, &z, &w, &rs, err);
    CHECK(e == CUZK_ENOMEM && strstr(err, "h: planted"), "h failing: %d %s", (int)e, err);
    CHECK(!strcmp(f.log, "EAHR") && !f.running, "h failing: calls %s, want EAHR (one release)", f.log);

    setup(&f, cpu, 0, 1, 0);
    e = groth16_prove(&got, &f.be, ks, &z, &w, &rs, err);
    CHECK(e == CUZK_EINVAL && !strcmp(f.log, "eA"), "a/b/c failing, no early work: calls %s, want eA", f.log);

    cpu->key_detach(cpu, ks);
    cpu->destroy(cpu);
    vk_free(&vk);
    public_free(&pub);
    wtns_close(&w);
    zkey_close(&z);
    printf("prover_test: %d checks, %d failures\n", checks, failures);
    return failures ? 1 : 0;
}
