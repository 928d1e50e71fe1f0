/* msm_test_body.h - MSM tests shared by msm_bn254_test.c and msm_bls12_381_test.c.
 *
 * For G1 and G2, sizes 0, 1, 2, 3, 17, 100, 1000, 4099, 10007 (the last one large enough
 * for the batch-affine bucket mode), against two oracles (see
 * msm_test_group.h): known discrete logs summed in Fr, and the plain sum of jac_mul.
 * Bases: distinct, with infinity, repeated, with negated neighbours (P + (-P) in a bucket).
 * Scalars: random, 0/1-heavy, special values (r-1, r, 2^256-1, powers of two, window
 * boundaries), all equal (every point in one bucket). Pools: none, 2 and 32 participants
 * (32 makes the bucket pass cut points into chunks).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ec/ec.h"
#include "ff/ff.h"
#include "msm/msm.h"
#include "util/check.h"
#include "util/pool.h"

static uint64_t g_rng = 0x853c49e6748fea9bull;
static uint64_t rnd64(void) /* splitmix64 */
{
    uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* random std-form scalar < r */
static void rnd_fr_std(fr_t *o)
{
    do {
        for (int i = 0; i < FR_LIMBS; i++)
            o->l[i] = rnd64();
        o->l[FR_LIMBS - 1] &= (FR_BITS % 64) ? ((1ull << (FR_BITS % 64)) - 1) : ~0ull;
    } while (!fr_std_is_canonical(o));
}

static void rnd_fr_mont(fr_t *o)
{
    fr_t t;
    rnd_fr_std(&t);
    fr_from_std(o, &t);
}

/* any 256-bit std value k -> (k mod r) in Montgomery form, by plain subtraction of r */
static void scalar_to_mont(fr_t *o, const fr_t *k)
{
    fr_t t = *k;
    while (!fr_std_is_canonical(&t)) {
        uint64_t borrow = 0;
        for (int i = 0; i < FR_LIMBS; i++) {
            unsigned __int128 d = (unsigned __int128)t.l[i] - FR_MODULUS[i] - borrow;
            t.l[i] = (uint64_t)d;
            borrow = (uint64_t)(d >> 64) & 1;
        }
    }
    fr_from_std(o, &t);
}

enum { BASES_DISTINCT, BASES_INF, BASES_REPEAT, BASES_NEG, BASES_KINDS };
static const char *const bases_name[] = {"distinct", "with-infinity", "repeated", "negated"};
enum { SCALARS_RANDOM, SCALARS_BINARY, SCALARS_SPECIAL, SCALARS_SAME, SCALARS_KINDS };
static const char *const scalars_name[] = {"random", "0/1-heavy", "special", "all-equal"};

static void special_scalar(fr_t *o, unsigned which)
{
    memset(o, 0, sizeof *o);
    switch (which % 10) {
    case 0: /* r - 1 */
        memcpy(o->l, FR_MODULUS, sizeof o->l);
        o->l[0] -= 1;
        break;
    case 1: /* r (unreduced, = 0 mod r) */
        memcpy(o->l, FR_MODULUS, sizeof o->l);
        break;
    case 2: /* 2^256 - 1 (unreduced) */
        memset(o->l, 0xff, sizeof o->l);
        break;
    case 3: /* a power of two */
        o->l[(which / 10) % 4] = 1ull << (rnd64() % 64);
        break;
    case 4: /* all ones below FR_BITS: every Booth digit carries */
        memset(o->l, 0xff, sizeof o->l);
        o->l[3] &= (FR_BITS % 64) ? ((1ull << (FR_BITS % 64)) - 1) : ~0ull;
        break;
    case 5: /* 2 */
        o->l[0] = 2;
        break;
    case 6: /* alternating bits */
        for (int i = 0; i < 4; i++)
            o->l[i] = 0xaaaaaaaaaaaaaaaaull >> (i == 3 ? 4 : 0);
        break;
    case 7: /* r + 1 (unreduced, = 1 mod r) */
        memcpy(o->l, FR_MODULUS, sizeof o->l);
        o->l[0] += 1;
        break;
    case 8: /* a 64-bit value */
        o->l[0] = rnd64();
        break;
    default:
        rnd_fr_std(o);
        break;
    }
}

static void make_scalars(fr_t *k, size_t n, int kind)
{
    fr_t same;
    rnd_fr_std(&same);
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case SCALARS_RANDOM:
            rnd_fr_std(&k[i]);
            break;
        case SCALARS_BINARY: {
            unsigned v = (unsigned)(rnd64() % 100);
            memset(&k[i], 0, sizeof k[i]);
            if (v < 45)
                ;
            else if (v < 90)
                k[i].l[0] = 1;
            else if (v < 92)
                special_scalar(&k[i], 0); /* -1 */
            else
                rnd_fr_std(&k[i]);
            break;
        }
        case SCALARS_SPECIAL:
            special_scalar(&k[i], (unsigned)(rnd64() % 1000));
            break;
        default:
            k[i] = same;
            break;
        }
    }
}

#define TG(x) g1_##x
#define TN(x) test_g1_##x
#define TMSM msm_g1
#define TNAME "G1"
#include "msm/msm_test_group.h"
#undef TG
#undef TN
#undef TMSM
#undef TNAME

#define TG(x) g2_##x
#define TN(x) test_g2_##x
#define TMSM msm_g2
#define TNAME "G2"
#include "msm/msm_test_group.h"
#undef TG
#undef TN
#undef TMSM
#undef TNAME

/* digit recoding against the integer it encodes, for every window size */
static void test_digits(void)
{
    for (int it = 0; it < 200; it++) {
        fr_t k;
        if (it < 20)
            special_scalar(&k, (unsigned)it);
        else
            rnd_fr_std(&k);
        for (unsigned c = 1; c <= 20; c++) {
            unsigned nbits = 256, W = (nbits + 1 + c - 1) / c;
            /* rebuild k from the digits, top down, in a 320-bit signed accumulator */
            int64_t acc[6] = {0}; /* little-endian words, two's complement */
            for (unsigned w = W; w-- > 0;) {
                /* acc <<= c */
                for (unsigned s = 0; s < c; s++) {
                    uint64_t carry = 0;
                    for (int i = 0; i < 6; i++) {
                        uint64_t v = (uint64_t)acc[i];
                        acc[i] = (int64_t)((v << 1) | carry);
                        carry = v >> 63;
                    }
                }
                int d = msm_digit(k.l, w, c);
                CHECK(d >= -(1 << (c - 1)) && d <= (1 << (c - 1)), "digit %d out of range c=%u",
                      d, c);
                /* acc += d (sign-extended) */
                uint64_t add = (uint64_t)(int64_t)d, ext = d < 0 ? ~0ull : 0, carry = 0;
                for (int i = 0; i < 6; i++) {
                    uint64_t a = (uint64_t)acc[i], b = i == 0 ? add : ext;
                    unsigned __int128 s = (unsigned __int128)a + b + carry;
                    acc[i] = (int64_t)(uint64_t)s;
                    carry = (uint64_t)(s >> 64);
                }
            }
            int ok = acc[4] == 0 && acc[5] == 0;
            for (int i = 0; i < 4; i++)
                ok &= (uint64_t)acc[i] == k.l[i];
            CHECK(ok, "Booth digits (c=%u) do not rebuild the scalar (case %d)", c, it);
        }
    }
}

static int msm_test_main(void)
{
    pool_t *pools[3] = {NULL, pool_create(2), pool_create(32)};
    if (!pools[1] || !pools[2]) {
        fprintf(stderr, "pool_create failed\n");
        return 2;
    }
    double t0 = now_ms();
    test_digits();
    test_g1_run_all(pools, 3, 1000, 100, 0);
    double t1 = now_ms();
    test_g2_run_all(pools, 3, 100, 17, 1);
    double t2 = now_ms();
    printf("%s: G1 checks %.0f ms, G2 checks %.0f ms (informational)\n", CURVE_NAME, t1 - t0,
           t2 - t1);
    pool_destroy(pools[1]);
    pool_destroy(pools[2]);
    if (failures) {
        fprintf(stderr, "%s: %d MSM checks failed\n", CURVE_NAME, failures);
        return 1;
    }
    printf("%s: MSM checks passed\n", CURVE_NAME);
    return 0;
}
