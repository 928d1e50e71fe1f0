/* msm_test_group.h - MSM checks for one group, included by msm_test_body.h once for G1 and
 * once for G2 (no include guard on purpose). Before including, define:
 *   TG(x)   the group's name for x     (g1_##x)
 *   TN(x)   this file's names          (test_g1_##x)
 *   TMSM    the MSM under test         (msm_g1)
 *   TNAME   the group name for messages ("G1")
 *
 * Oracles: (1) known discrete logs: every base is b_i G with b_i tracked in Fr, so
 * sum k_i b_i G = (sum k_i b_i mod r) G, one scalar multiplication, with the sum done in
 * Fr arithmetic; (2) for small sizes, the plain sum of TG(jac_mul)(base_i, k_i).
 */

/* bases with known logs. kind: BASES_DISTINCT, BASES_INF (every 5th infinity, log 0),
 * BASES_REPEAT (three points cycled), BASES_NEG (odd i: minus the previous base) */
static void TN(make_bases)(TG(aff_t) *bases, fr_t *logs, size_t n, int kind)
{
    TG(aff_t) g, q;
    TG(jac_t) p, t;
    fr_t b0, qs, s;
    TG(generator)(&g);
    rnd_fr_mont(&b0);
    rnd_fr_mont(&qs);
    fr_to_std(&s, &b0);
    TG(jac_mul)(&p, &g, s.l);
    fr_to_std(&s, &qs);
    TG(jac_mul)(&t, &g, s.l);
    TG(jac_to_aff)(&q, &t);
    TG(jac_t) *jac = malloc(n * sizeof *jac);
    if (!jac) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    fr_t lg = b0;
    for (size_t i = 0; i < n; i++) {
        jac[i] = p;
        logs[i] = lg;
        TG(jac_add_aff)(&p, &p, &q);
        fr_add(&lg, &lg, &qs);
    }
    TG(batch_to_aff)(bases, jac, n);
    free(jac);
    for (size_t i = 0; i < n; i++) {
        if (kind == BASES_INF && i % 5 == 2) {
            memset(&bases[i], 0, sizeof bases[i]);
            fr_set_zero(&logs[i]);
        } else if (kind == BASES_REPEAT && i >= 3) {
            bases[i] = bases[i % 3];
            logs[i] = logs[i % 3];
        } else if (kind == BASES_NEG && (i & 1)) {
            TG(aff_neg)(&bases[i], &bases[i - 1]);
            fr_neg(&logs[i], &logs[i - 1]);
        }
    }
}

/* (sum k_i b_i) G */
static void TN(expect_logs)(TG(jac_t) *o, const fr_t *k_std, const fr_t *logs, size_t n)
{
    fr_t acc, k, t;
    fr_set_zero(&acc);
    for (size_t i = 0; i < n; i++) {
        scalar_to_mont(&k, &k_std[i]);
        fr_mul(&t, &k, &logs[i]);
        fr_add(&acc, &acc, &t);
    }
    TG(aff_t) g;
    TG(generator)(&g);
    fr_to_std(&t, &acc);
    TG(jac_mul)(o, &g, t.l);
}

/* sum of k_i base_i by plain scalar multiplication */
static void TN(expect_plain)(TG(jac_t) *o, const TG(aff_t) *bases, const fr_t *k_std, size_t n)
{
    TG(jac_t) acc, t;
    TG(jac_set_inf)(&acc);
    for (size_t i = 0; i < n; i++) {
        TG(jac_mul)(&t, &bases[i], k_std[i].l);
        TG(jac_add)(&acc, &acc, &t);
    }
    *o = acc;
}

static double TN(run_case)(size_t n, int bkind, int skind, pool_t *pool, int plain)
{
    TG(aff_t) *bases = malloc((n ? n : 1) * sizeof *bases);
    fr_t *logs = malloc((n ? n : 1) * sizeof *logs), *k = malloc((n ? n : 1) * sizeof *k);
    if (!bases || !logs || !k) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    TN(make_bases)(bases, logs, n, bkind);
    make_scalars(k, n, skind);
    TG(jac_t) got, want;
    double t0 = now_ms();
    TMSM(&got, bases, k, n, pool);
    double ms = now_ms() - t0;
    TN(expect_logs)(&want, k, logs, n);
    CHECK(TG(jac_eq)(&got, &want), "%s %s: n=%zu bases=%s scalars=%s pool=%d: != log oracle",
          CURVE_NAME, TNAME, n, bases_name[bkind], scalars_name[skind], pool_size(pool));
    if (plain) {
        TN(expect_plain)(&want, bases, k, n);
        CHECK(TG(jac_eq)(&got, &want), "%s %s: n=%zu bases=%s scalars=%s pool=%d: != plain sum",
              CURVE_NAME, TNAME, n, bases_name[bkind], scalars_name[skind], pool_size(pool));
    }
    free(bases);
    free(logs);
    free(k);
    return ms;
}

/* sizes up to max_full run every combination of bases, scalars and pools; the plain
 * reference runs up to max_plain points; light: fewer combinations at the larger sizes */
static void TN(run_all)(pool_t **pools, int n_pools, size_t max_full, size_t max_plain, int light)
{
    static const size_t sizes[] = {0, 1, 2, 3, 17, 100, 1000, 4099, 10007};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        if (n <= max_full) {
            for (int b = 0; b < BASES_KINDS; b++)
                for (int s = 0; s < SCALARS_KINDS; s++)
                    TN(run_case)(n, b, s, pools[(b + s) % n_pools], n <= max_plain);
            continue;
        }
        /* a few combinations at the larger sizes, every pool at least once */
        TN(run_case)(n, BASES_DISTINCT, SCALARS_RANDOM, pools[1 % n_pools], 0);
        TN(run_case)(n, BASES_REPEAT, SCALARS_SAME, pools[0], 0);   /* doublings, overflow */
        TN(run_case)(n, BASES_NEG, SCALARS_SAME, pools[n_pools - 1], 0); /* P + (-P) */
        if (light)
            continue;
        TN(run_case)(n, BASES_INF, SCALARS_BINARY, pools[n_pools - 1], 0);
        TN(run_case)(n, BASES_NEG, SCALARS_SPECIAL, pools[0], 0);
        TN(run_case)(n, BASES_DISTINCT, SCALARS_SPECIAL, pools[n_pools - 1], 0);
    }
}
