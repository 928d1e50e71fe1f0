#!/usr/bin/env node
// arith.js - independent BigInt oracle for the field, curve and pairing tests.
//
// Usage: node tests/oracle/arith.js <bn254|bls12_381> <dump file>...
// Each dump line is "op operand... result..." in standard-form hex, written by the
// ff_*_test / ec_*_test programs with --dump. This script recomputes every result with
// plain BigInt arithmetic (Fq12 as Fq2[w]/(w^6 - xi), a different algorithm from the C
// tower) and the pairing with ffjavascript (the library snarkjs uses) when it is installed;
// without it the pairing lines are reported as skipped. Exit status 1 on any mismatch.
"use strict";
const fs = require("fs");
const path = require("path");

const CURVES = {
    bn254: (() => {
        const u = 4965661367192848881n;
        return {
            q: 36n * u ** 4n + 36n * u ** 3n + 24n * u ** 2n + 6n * u + 1n,
            r: 36n * u ** 4n + 36n * u ** 3n + 18n * u ** 2n + 6n * u + 1n,
            b: 3n, xi: [9n, 1n], dtype: true, ffname: "bn128",
            g1: [1n, 2n],
            g2: [[10857046999023057135944570762232829481370756359578518086990519993285655852781n,
                  11559732032986387107991004021392285783925812861821192530917403151452391805634n],
                 [8495653923123431417604973247489272438418190587263600148770280649306958101930n,
                  4082367875863433681332203403145435568316851327593401208105741076214120093531n]],
        };
    })(),
    bls12_381: (() => {
        const x = -0xd201000000010000n;
        const r = x ** 4n - x ** 2n + 1n;
        return {
            q: (x - 1n) ** 2n * r / 3n + x, r,
            b: 4n, xi: [1n, 1n], dtype: false, ffname: "bls12381",
            g1: [0x17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bbn,
                 0x08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1n],
            g2: [[0x024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8n,
                  0x13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7en],
                 [0x0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801n,
                  0x0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79ben]],
        };
    })(),
};

const name = process.argv[2];
const C = CURVES[name];
if (!C) {
    console.error("usage: arith.js <bn254|bls12_381> <dump file>...");
    process.exit(2);
}
const q = C.q, r = C.r;

// ---- prime fields
const mod = (a, m) => ((a % m) + m) % m;
function powm(b, e, m) {
    let res = 1n;
    b = mod(b, m);
    while (e > 0n) {
        if (e & 1n) res = res * b % m;
        b = b * b % m;
        e >>= 1n;
    }
    return res;
}
function invm(a, m) { // extended Euclid; 0 has no inverse and maps to 0 as in the C code
    a = mod(a, m);
    if (a === 0n) return 0n;
    let [r0, r1, s0, s1] = [m, a, 0n, 1n];
    while (r1 !== 0n) {
        const t = r0 / r1;
        [r0, r1] = [r1, r0 - t * r1];
        [s0, s1] = [s1, s0 - t * s1];
    }
    return mod(s0, m);
}

// ---- Fq2 = Fq[u]/(u^2+1) as [a, b]
const F2 = {
    add: (a, b) => [mod(a[0] + b[0], q), mod(a[1] + b[1], q)],
    sub: (a, b) => [mod(a[0] - b[0], q), mod(a[1] - b[1], q)],
    mul: (a, b) => [mod(a[0] * b[0] - a[1] * b[1], q), mod(a[0] * b[1] + a[1] * b[0], q)],
    neg: (a) => [mod(-a[0], q), mod(-a[1], q)],
    eq: (a, b) => a[0] === b[0] && a[1] === b[1],
    zero: () => [0n, 0n],
    one: () => [1n, 0n],
    isZero: (a) => a[0] === 0n && a[1] === 0n,
    inv: (a) => {
        const n = invm(a[0] * a[0] + a[1] * a[1], q);
        return [mod(a[0] * n, q), mod(-a[1] * n, q)];
    },
};
F2.small = (k) => [mod(k, q), 0n];

// ---- Fq12 = Fq2[w]/(w^6 - xi), coefficients of w^0..w^5 (schoolbook, independent of the C tower)
function f12FromTower(c) { // c: 6 Fq2 in tower order c0.c0, c0.c1, c0.c2, c1.c0, c1.c1, c1.c2
    return [c[0], c[3], c[1], c[4], c[2], c[5]];
}
function f12Mul(a, b) {
    const t = [];
    for (let i = 0; i < 11; i++) t.push(F2.zero());
    for (let i = 0; i < 6; i++)
        for (let j = 0; j < 6; j++) t[i + j] = F2.add(t[i + j], F2.mul(a[i], b[j]));
    const o = [];
    for (let i = 0; i < 6; i++) o.push(i + 6 < 11 ? F2.add(t[i], F2.mul(t[i + 6], C.xi)) : t[i]);
    return o;
}
const f12One = () => [F2.one(), F2.zero(), F2.zero(), F2.zero(), F2.zero(), F2.zero()];
const f12Eq = (a, b) => a.every((x, i) => F2.eq(x, b[i]));
function f12Pow(a, e) {
    let res = f12One();
    for (let i = BigInt(e.toString(2).length) - 1n; i >= 0n; i--) {
        res = f12Mul(res, res);
        if ((e >> i) & 1n) res = f12Mul(res, a);
    }
    return res;
}

// ---- curves (affine, null = infinity), generic over a field object
function curveOps(F, b) {
    const three = F === F2 ? F2.small(3n) : 3n;
    const E = {
        add(P, Q) {
            if (P === null) return Q;
            if (Q === null) return P;
            let lam;
            if (F.eq(P[0], Q[0])) {
                if (F.isZero(F.add(P[1], Q[1]))) return null;
                lam = F.mul(F.mul(three, F.mul(P[0], P[0])), F.inv(F.add(P[1], P[1])));
            } else {
                lam = F.mul(F.sub(Q[1], P[1]), F.inv(F.sub(Q[0], P[0])));
            }
            const x3 = F.sub(F.sub(F.mul(lam, lam), P[0]), Q[0]);
            return [x3, F.sub(F.mul(lam, F.sub(P[0], x3)), P[1])];
        },
        mul(P, k) {
            let R = null;
            while (k > 0n) {
                if (k & 1n) R = E.add(R, P);
                P = E.add(P, P);
                k >>= 1n;
            }
            return R;
        },
        onCurve(P) {
            return P === null || F.eq(F.mul(P[1], P[1]), F.add(F.mul(F.mul(P[0], P[0]), P[0]), b));
        },
    };
    return E;
}
const F1 = {
    add: (a, b) => mod(a + b, q), sub: (a, b) => mod(a - b, q), mul: (a, b) => a * b % q,
    eq: (a, b) => a === b, isZero: (a) => a === 0n, inv: (a) => invm(a, q),
};
const G1 = curveOps(F1, C.b);
const bTwist = C.dtype ? F2.mul(F2.small(C.b), F2.inv(C.xi)) : F2.mul(F2.small(C.b), C.xi);
const G2 = curveOps(F2, bTwist);

// ---- checking
let fails = 0, checked = 0, skipped = 0;
const pairings = [];
function expect(ok, what, line) {
    checked++;
    if (!ok) {
        fails++;
        if (fails <= 10) console.error("MISMATCH " + what + ": " + line.slice(0, 200));
    }
}
const eqArr = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

function checkLine(line) {
    const t = line.trim().split(/\s+/);
    const op = t[0];
    const v = t.slice(1).map((s) => BigInt(s));
    const fq2 = (i) => [v[i], v[i + 1]];
    const g1 = (i) => (v[i] === 0n && v[i + 1] === 0n ? null : [v[i], v[i + 1]]);
    const g2 = (i) => (v.slice(i, i + 4).every((x) => x === 0n) ? null : [fq2(i), fq2(i + 2)]);
    const f12 = (i) => f12FromTower([0, 2, 4, 6, 8, 10].map((k) => fq2(i + k)));
    switch (op) {
    case "fr_mul": return expect(v[2] === v[0] * v[1] % r, op, line);
    case "fr_add": return expect(v[2] === (v[0] + v[1]) % r, op, line);
    case "fr_sub": return expect(v[2] === mod(v[0] - v[1], r), op, line);
    case "fr_inv": return expect(v[1] === invm(v[0], r), op, line);
    case "fq_mul": return expect(v[2] === v[0] * v[1] % q, op, line);
    case "fq_sqr": return expect(v[1] === v[0] * v[0] % q, op, line);
    case "fq_add": return expect(v[2] === (v[0] + v[1]) % q, op, line);
    case "fq_sub": return expect(v[2] === mod(v[0] - v[1], q), op, line);
    case "fq_inv": return expect(v[1] === invm(v[0], q), op, line);
    case "fq2_mul": return expect(F2.eq(fq2(4), F2.mul(fq2(0), fq2(2))), op, line);
    case "fq2_inv": return expect(F2.eq(F2.mul(fq2(0), fq2(2)), F2.one()), op, line);
    case "fq12_mul": return expect(f12Eq(f12(24), f12Mul(f12(0), f12(12))), op, line);
    case "fq12_inv": return expect(f12Eq(f12Mul(f12(0), f12(12)), f12One()), op, line);
    case "fq12_frob1": return expect(f12Eq(f12(12), f12Pow(f12(0), q)), op, line);
    case "fr_root": {
        const s = v[0], w = v[1];
        // primitive 2^s-th root derived from generator 5
        return expect(w === powm(5n, (r - 1n) >> s, r) && powm(w, 1n << (s - 1n), r) === r - 1n, op, line);
    }
    case "g1_gen": return expect(eqArr(v, C.g1), op, line);
    case "g2_gen": return expect(eqArr(v, [...C.g2[0], ...C.g2[1]]), op, line);
    case "g1_mul": {
        const P = G1.mul(C.g1, v[0]);
        return expect(P !== null && eqArr(v.slice(1), P), op, line);
    }
    case "g2_mul": {
        const P = G2.mul(C.g2, v[0]);
        return expect(P !== null && eqArr(v.slice(1), [...P[0], ...P[1]]), op, line);
    }
    case "g1_add": {
        const R = G1.add(g1(0), g1(2));
        return expect(G1.onCurve(g1(0)) && G1.onCurve(g1(2)) && R !== null && eqArr(v.slice(4), R), op, line);
    }
    case "g2_add": {
        const R = G2.add(g2(0), g2(4));
        return expect(G2.onCurve(g2(0)) && G2.onCurve(g2(4)) && R !== null &&
                      eqArr(v.slice(8), [...R[0], ...R[1]]), op, line);
    }
    case "pairing":
        pairings.push({ line, p: [v[0], v[1]], q: [fq2(2), fq2(4)], e: v.slice(6) });
        return;
    default:
        fails++;
        console.error("unknown op " + op);
    }
}

function loadFf() {
    const roots = [process.cwd(), path.join(__dirname, "..", "..")];
    for (const root of roots) {
        try {
            return require(require.resolve("ffjavascript", { paths: [root] }));
        } catch (e) { /* try the next root, then NODE_PATH */ }
    }
    try {
        return require("ffjavascript");
    } catch (e) {
        return null;
    }
}

async function checkPairings() {
    if (pairings.length === 0) return;
    const ff = loadFf();
    if (!ff) {
        skipped += pairings.length;
        console.log("SKIP: ffjavascript not installed (npm ci); " + pairings.length + " pairing values not checked");
        return;
    }
    const curve = await ff.getCurveFromName(C.ffname, true);
    try {
        for (const pr of pairings) {
            const P = curve.G1.fromObject([pr.p[0], pr.p[1], 1n]);
            const Q = curve.G2.fromObject([pr.q[0], pr.q[1], [1n, 0n]]);
            const e = curve.Gt.toObject(curve.pairing(P, Q));
            const flat = e.flat(3);
            expect(eqArr(flat, pr.e), "pairing vs ffjavascript", pr.line);
        }
    } finally {
        await curve.terminate();
    }
}

(async () => {
    for (const file of process.argv.slice(3))
        for (const line of fs.readFileSync(file, "utf8").split("\n"))
            if (line.trim()) checkLine(line);
    await checkPairings();
    console.log(`${name}: ${checked} values checked against the BigInt/ffjavascript oracle, ${fails} mismatches` +
                (skipped ? `, ${skipped} skipped` : ""));
    process.exit(fails ? 1 : 0);
})();
