// verify_proofs.js - verifies every proof-<i>.json / public-<i>.json pair in the given folders
// with snarkjs in one node process (a suite with many proofs would spend most of its time
// starting snarkjs once per proof). Prints "snarkjs verified N of M proofs" and exits 1 when
// any is rejected or none was found. Usage: node verify_proofs.js REPO VK.json DIR...
"use strict";
const snarkjs = require(process.argv[2] + '/node_modules/snarkjs');
const fs = require('fs');
(async () => {
    const vk = JSON.parse(fs.readFileSync(process.argv[3]));
    const quiet = {info() {}, debug() {}, warn() {}, error() {}};
    let bad = 0, n = 0;
    for (const dir of process.argv.slice(4)) {
        for (const f of fs.readdirSync(dir).filter(f => /^proof-\d+\.json$/.test(f))) {
            const i = f.slice(6, -5);
            const ok = await snarkjs.groth16.verify(vk, JSON.parse(fs.readFileSync(`${dir}/public-${i}.json`)),
                                                    JSON.parse(fs.readFileSync(`${dir}/${f}`)), quiet);
            n++;
            if (!ok) { bad++; console.log(`REJECTED ${dir}/${f}`); }
        }
    }
    console.log(`snarkjs verified ${n - bad} of ${n} proofs`);
    process.exit(bad || !n ? 1 : 0);
})().catch(e => { console.log('ERROR ' + e.message); process.exit(1); });
