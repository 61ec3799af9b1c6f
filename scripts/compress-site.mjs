// Compresses the site's text and wasm files once, at build time: each gets a .br (brotli, quality 11)
// and a .gz (gzip -9) beside it when that is smaller, which the server sends to browsers that accept
// them (server/src/assets.rs). Variants whose file is gone are removed.
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const site = process.argv[2];
if (!site) {
  console.error('usage: compress-site.mjs <site dir>');
  process.exit(2);
}
const compressible = new Set(['.js', '.wasm', '.css', '.svg', '.webmanifest', '.json', '.html', '.txt']);

function* files(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(p);
    else yield p;
  }
}

let written = 0;
for (const file of [...files(site)]) {
  const ext = path.extname(file);
  if (ext === '.br' || ext === '.gz') {
    if (!fs.existsSync(file.slice(0, -ext.length))) fs.rmSync(file);
    continue;
  }
  if (!compressible.has(ext)) continue;
  const data = fs.readFileSync(file);
  const variants = {
    '.br': zlib.brotliCompressSync(data, {
      params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length,
      },
    }),
    '.gz': zlib.gzipSync(data, { level: 9 }),
  };
  for (const [suffix, packed] of Object.entries(variants)) {
    const out = file + suffix;
    if (packed.length < data.length) {
      // Unchanged variants are left alone, so the server's embed does not rebuild for nothing.
      if (!fs.existsSync(out) || !fs.readFileSync(out).equals(packed)) {
        fs.writeFileSync(out, packed);
        written++;
      }
    } else if (fs.existsSync(out)) {
      fs.rmSync(out);
    }
  }
}
console.log(`compress-site: ${written} variants written`);
