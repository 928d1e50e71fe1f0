/* ref.h - plain CPU reference arithmetic for the kernel labs: Montgomery Fp with 64-bit
 * limbs (CIOS with unsigned __int128), Fp2 = Fp[u]/(u^2+1), square roots (p = 3 mod 4),
 * and Jacobian points on y^2 = x^3 + b (a = 0). Written for clarity, not speed; it shares
 * no code with src/gpu. Elements use the same bytes as the device's (R = 2^(64*L)).
 */
#pragma once
#include <stdint.h>
#include <string.h>

template <int L>
struct rfield {
    uint64_t p[L], m0, one[L], rr[L];
    void init(const uint32_t *p32)
    {
        for (int i = 0; i < L; i++)
            p[i] = p32[2 * i] | (uint64_t)p32[2 * i + 1] << 32;
        uint64_t inv = 1; /* p^-1 mod 2^64 by Newton */
        for (int i = 0; i < 7; i++)
            inv *= 2 - p[0] * inv;
        m0 = 0 - inv;
        /* one = 2^(64L) mod p by doubling 1 64L times; rr likewise from one */
        uint64_t x[L] = {1};
        for (int i = 1; i < L; i++)
            x[i] = 0;
        for (int k = 0; k < 64 * L; k++)
            dbl(x, x);
        memcpy(one, x, sizeof x);
        for (int k = 0; k < 64 * L; k++)
            dbl(x, x);
        memcpy(rr, x, sizeof x);
    }
    bool geq(const uint64_t *a) const
    {
        for (int i = L - 1; i >= 0; i--)
            if (a[i] != p[i])
                return a[i] > p[i];
        return true;
    }
    void sub_p(uint64_t *a) const
    {
        unsigned __int128 bw = 0;
        for (int i = 0; i < L; i++) {
            unsigned __int128 d = (unsigned __int128)a[i] - p[i] - bw;
            a[i] = (uint64_t)d;
            bw = (d >> 64) ? 1 : 0;
        }
    }
    void add(uint64_t *o, const uint64_t *a, const uint64_t *b) const
    {
        unsigned __int128 c = 0;
        uint64_t t[L];
        for (int i = 0; i < L; i++) {
            c += (unsigned __int128)a[i] + b[i];
            t[i] = (uint64_t)c;
            c >>= 64;
        }
        if (c || geq(t))
            sub_p(t);
        memcpy(o, t, sizeof t);
    }
    void dbl(uint64_t *o, const uint64_t *a) const { add(o, a, a); }
    void sub(uint64_t *o, const uint64_t *a, const uint64_t *b) const
    {
        unsigned __int128 bw = 0;
        uint64_t t[L];
        for (int i = 0; i < L; i++) {
            unsigned __int128 d = (unsigned __int128)a[i] - b[i] - bw;
            t[i] = (uint64_t)d;
            bw = (d >> 64) ? 1 : 0;
        }
        if (bw) {
            unsigned __int128 c = 0;
            for (int i = 0; i < L; i++) {
                c += (unsigned __int128)t[i] + p[i];
                t[i] = (uint64_t)c;
                c >>= 64;
            }
        }
        memcpy(o, t, sizeof t);
    }
    /* CIOS Montgomery multiplication */
    void mul(uint64_t *o, const uint64_t *a, const uint64_t *b) const
    {
        uint64_t t[L + 2] = {0};
        for (int i = 0; i < L; i++) {
            unsigned __int128 c = 0;
            for (int j = 0; j < L; j++) {
                c += (unsigned __int128)a[j] * b[i] + t[j];
                t[j] = (uint64_t)c;
                c >>= 64;
            }
            c += t[L];
            t[L] = (uint64_t)c;
            t[L + 1] = (uint64_t)(c >> 64);
            uint64_t m = t[0] * m0;
            c = (unsigned __int128)m * p[0] + t[0];
            c >>= 64;
            for (int j = 1; j < L; j++) {
                c += (unsigned __int128)m * p[j] + t[j];
                t[j - 1] = (uint64_t)c;
                c >>= 64;
            }
            c += t[L];
            t[L - 1] = (uint64_t)c;
            t[L] = t[L + 1] + (uint64_t)(c >> 64);
        }
        if (t[L] || geq(t))
            sub_p(t);
        memcpy(o, t, L * 8);
    }
    bool is_zero(const uint64_t *a) const
    {
        uint64_t x = 0;
        for (int i = 0; i < L; i++)
            x |= a[i];
        return !x;
    }
    /* a^e, e given as L limbs (standard integer) */
    void pow(uint64_t *o, const uint64_t *a, const uint64_t *e) const
    {
        uint64_t r[L], b[L];
        memcpy(r, one, sizeof r);
        memcpy(b, a, sizeof b);
        for (int i = 0; i < 64 * L; i++) {
            if (e[i / 64] >> (i % 64) & 1)
                mul(r, r, b);
            mul(b, b, b);
        }
        memcpy(o, r, sizeof r);
    }
    void inv(uint64_t *o, const uint64_t *a) const
    {
        uint64_t e[L];
        memcpy(e, p, sizeof e);
        e[0] -= 2; /* p is odd and > 2 */
        pow(o, a, e);
    }
    /* sqrt for p = 3 mod 4: a^((p+1)/4); returns false if a is not a square */
    bool sqrt(uint64_t *o, const uint64_t *a) const
    {
        uint64_t e[L], r[L], c[L];
        memcpy(e, p, sizeof e);
        unsigned __int128 cy = 1;
        for (int i = 0; i < L; i++) {
            cy += e[i];
            e[i] = (uint64_t)cy;
            cy >>= 64;
        }
        for (int i = 0; i < L; i++) /* >> 2 */
            e[i] = (e[i] >> 2) | (i + 1 < L ? e[i + 1] << 62 : 0);
        pow(r, a, e);
        mul(c, r, r);
        if (memcmp(c, a, sizeof c))
            return false;
        memcpy(o, r, sizeof r);
        return true;
    }
};

/* scalar-field helpers on standard-form integers (for aggregating MSM scalars) */
template <int L>
static void ref_add_mod(uint64_t *o, const uint64_t *a, const uint64_t *b, const uint64_t *m)
{
    unsigned __int128 c = 0;
    uint64_t t[L];
    for (int i = 0; i < L; i++) {
        c += (unsigned __int128)a[i] + b[i];
        t[i] = (uint64_t)c;
        c >>= 64;
    }
    bool ge = c != 0;
    if (!ge) {
        ge = true;
        for (int i = L - 1; i >= 0; i--)
            if (t[i] != m[i]) {
                ge = t[i] > m[i];
                break;
            }
    }
    if (ge) {
        unsigned __int128 bw = 0;
        for (int i = 0; i < L; i++) {
            unsigned __int128 d = (unsigned __int128)t[i] - m[i] - bw;
            t[i] = (uint64_t)d;
            bw = (d >> 64) ? 1 : 0;
        }
    }
    memcpy(o, t, sizeof t);
}

/* o += a, plain integers: o of 5 limbs, a of 4 (no reduction: the MSM references sum
 * scalars per base exactly, since test points need not have order r) */
static void ref_add_wide(uint64_t *o, const uint64_t *a)
{
    unsigned __int128 c = 0;
    for (int i = 0; i < 5; i++) {
        c += (unsigned __int128)o[i] + (i < 4 ? a[i] : 0);
        o[i] = (uint64_t)c;
        c >>= 64;
    }
}

/* Fp (E = 1) or Fp2 (E = 2) elements as E*L limbs, ops through an rfield */
template <int L, int E>
struct rext {
    const rfield<L> *f;
    static const int W = L * E;
    void add(uint64_t *o, const uint64_t *a, const uint64_t *b) const
    {
        for (int e = 0; e < E; e++)
            f->add(o + e * L, a + e * L, b + e * L);
    }
    void sub(uint64_t *o, const uint64_t *a, const uint64_t *b) const
    {
        for (int e = 0; e < E; e++)
            f->sub(o + e * L, a + e * L, b + e * L);
    }
    void mul(uint64_t *o, const uint64_t *a, const uint64_t *b) const
    {
        if (E == 1) {
            f->mul(o, a, b);
            return;
        }
        /* (a0 + a1 u)(b0 + b1 u) = a0b0 - a1b1 + (a0b1 + a1b0) u, schoolbook */
        uint64_t t0[L], t1[L], t2[L], t3[L];
        f->mul(t0, a, b);
        f->mul(t1, a + L, b + L);
        f->mul(t2, a, b + L);
        f->mul(t3, a + L, b);
        f->sub(o, t0, t1);
        f->add(o + L, t2, t3);
    }
    bool is_zero(const uint64_t *a) const
    {
        for (int e = 0; e < E; e++)
            if (!f->is_zero(a + e * L))
                return false;
        return true;
    }
    void set_one(uint64_t *o) const
    {
        memset(o, 0, W * 8);
        memcpy(o, f->one, L * 8);
    }
    void inv(uint64_t *o, const uint64_t *a) const
    {
        if (E == 1) {
            f->inv(o, a);
            return;
        }
        /* 1/(a0 + a1 u) = (a0 - a1 u) / (a0^2 + a1^2) */
        uint64_t n0[L], n1[L], ni[L], z[L] = {0};
        f->mul(n0, a, a);
        f->mul(n1, a + L, a + L);
        f->add(n0, n0, n1);
        f->inv(ni, n0);
        f->mul(o, a, ni);
        f->sub(n1, z, a + L);
        f->mul(o + L, n1, ni);
    }
    /* square root (p = 3 mod 4; for Fp2 by the norm method); false if none */
    bool sqrt(uint64_t *o, const uint64_t *a) const
    {
        if (E == 1)
            return f->sqrt(o, a);
        uint64_t n0[L], n1[L], g[L], d[L], half[L], x0[L], x1[L], t[L];
        f->mul(n0, a, a);
        f->mul(n1, a + L, a + L);
        f->add(n0, n0, n1);
        if (!f->sqrt(g, n0))
            return false;
        uint64_t two[L];
        f->add(two, f->one, f->one);
        f->inv(half, two);
        f->add(d, a, g);
        f->mul(d, d, half);
        if (!f->sqrt(x0, d)) {
            f->sub(d, a, g);
            f->mul(d, d, half);
            if (!f->sqrt(x0, d))
                return false;
        }
        if (f->is_zero(x0))
            return false;
        f->add(t, x0, x0);
        f->inv(t, t);
        f->mul(x1, a + L, t);
        memcpy(o, x0, L * 8);
        memcpy(o + L, x1, L * 8);
        uint64_t chk[2 * L];
        mul(chk, o, o);
        return memcmp(chk, a, sizeof chk) == 0;
    }
};

/* Jacobian point on y^2 = x^3 + b over rext<L, E>; z = 0 is infinity */
template <int L, int E>
struct rpoint {
    uint64_t x[L * E], y[L * E], z[L * E];
};

template <int L, int E>
struct rcurve {
    rext<L, E> F;
    typedef rpoint<L, E> pt;
    static const int W = L * E;
    bool is_inf(const pt &p) const { return F.is_zero(p.z); }
    void set_inf(pt &p) const { memset(&p, 0, sizeof p); }
    /* dbl-2009-l: 2M + 5S */
    void dbl(pt &o, const pt &p) const
    {
        if (is_inf(p)) {
            o = p;
            return;
        }
        uint64_t A[W], B[W], C[W], D[W], E_[W], Fv[W], t[W];
        F.mul(A, p.x, p.x);
        F.mul(B, p.y, p.y);
        F.mul(C, B, B);
        F.add(t, p.x, B);
        F.mul(t, t, t);
        F.sub(t, t, A);
        F.sub(t, t, C);
        F.add(D, t, t);
        F.add(E_, A, A);
        F.add(E_, E_, A);
        F.mul(Fv, E_, E_);
        pt r;
        F.sub(r.x, Fv, D);
        F.sub(r.x, r.x, D);
        F.sub(t, D, r.x);
        F.mul(r.y, E_, t);
        F.add(C, C, C);
        F.add(C, C, C);
        F.add(C, C, C);
        F.sub(r.y, r.y, C);
        F.mul(r.z, p.y, p.z);
        F.add(r.z, r.z, r.z);
        o = r;
    }
    /* add-2007-bl */
    void add(pt &o, const pt &p, const pt &q) const
    {
        if (is_inf(p)) {
            o = q;
            return;
        }
        if (is_inf(q)) {
            o = p;
            return;
        }
        uint64_t z1z1[W], z2z2[W], u1[W], u2[W], s1[W], s2[W], h[W], i[W], j[W], r[W], v[W], t[W];
        F.mul(z1z1, p.z, p.z);
        F.mul(z2z2, q.z, q.z);
        F.mul(u1, p.x, z2z2);
        F.mul(u2, q.x, z1z1);
        F.mul(s1, p.y, q.z);
        F.mul(s1, s1, z2z2);
        F.mul(s2, q.y, p.z);
        F.mul(s2, s2, z1z1);
        F.sub(h, u2, u1);
        F.sub(r, s2, s1);
        if (F.is_zero(h)) {
            if (F.is_zero(r)) {
                dbl(o, p);
                return;
            }
            set_inf(o);
            return;
        }
        F.add(i, h, h);
        F.mul(i, i, i);
        F.mul(j, h, i);
        F.add(r, r, r);
        F.mul(v, u1, i);
        pt out;
        F.mul(out.x, r, r);
        F.sub(out.x, out.x, j);
        F.sub(out.x, out.x, v);
        F.sub(out.x, out.x, v);
        F.sub(t, v, out.x);
        F.mul(out.y, r, t);
        F.mul(t, s1, j);
        F.add(t, t, t);
        F.sub(out.y, out.y, t);
        F.add(t, p.z, q.z);
        F.mul(t, t, t);
        F.sub(t, t, z1z1);
        F.sub(t, t, z2z2);
        F.mul(out.z, t, h);
        o = out;
    }
    /* k * p, k a plain integer of nl 64-bit limbs (default 4) */
    void mul(pt &o, const pt &p, const uint64_t *k, int nl = 4) const
    {
        pt r;
        set_inf(r);
        for (int i = 64 * nl - 1; i >= 0; i--) {
            dbl(r, r);
            if (k[i / 64] >> (i % 64) & 1)
                add(r, r, p);
        }
        o = r;
    }
    /* affine (x, y) or infinity (all zero) */
    void to_affine(uint64_t *ax, uint64_t *ay, const pt &p) const
    {
        if (is_inf(p)) {
            memset(ax, 0, W * 8);
            memset(ay, 0, W * 8);
            return;
        }
        uint64_t zi[W], zi2[W], zi3[W];
        F.inv(zi, p.z);
        F.mul(zi2, zi, zi);
        F.mul(zi3, zi2, zi);
        F.mul(ax, p.x, zi2);
        F.mul(ay, p.y, zi3);
    }
    void from_affine(pt &o, const uint64_t *ax, const uint64_t *ay) const
    {
        if (F.is_zero(ax) && F.is_zero(ay)) {
            set_inf(o);
            return;
        }
        memcpy(o.x, ax, W * 8);
        memcpy(o.y, ay, W * 8);
        F.set_one(o.z);
    }
};
