// The phone's first download: what the first page loads (the main wasm and its script), gzip -9,
// against its 400 KiB budget; exits non-zero above it, so the test command (scripts/test.sh) fails when a
// feature makes every phone download more: the code it adds goes to a page's chunk instead
// (app/src/pages/on_demand.rs).
//
//   node scripts/wasm-budget.mjs [SITE_DIR]     (default: target/site, as the release build writes it)
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';

const BUDGET = 400 * 1024;
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = path.join(process.argv[2] || path.join(root, 'target', 'site'), 'pkg');
const gzip = (f) => zlib.gzipSync(fs.readFileSync(path.join(pkg, f)), { level: 9 }).length;
const kib = (n) => `${(n / 1024).toFixed(1)} KiB`;
const parts = ['klaxon.wasm', 'klaxon.js'].map((f) => [f, gzip(f)]);
const total = parts.reduce((n, [, b]) => n + b, 0);
console.log(`wasm-budget: ${parts.map(([f, b]) => `${f} ${kib(b)}`).join(' + ')} = ${kib(total)} gzip -9 (budget ${kib(BUDGET)})`);
if (total > BUDGET) {
  console.error(`wasm-budget: the first page's download is ${kib(total - BUDGET)} over its budget`);
  process.exit(1);
}
