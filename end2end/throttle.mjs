// An HTTP proxy that slows every request the way DevTools' "Fast 3G" profile does (each request
// waits its latency before the answer starts; answers share the download rate, request bodies the
// upload rate). Chromium sends all its traffic through it (`--proxy-server`, loopback included),
// so a service worker's own requests are slowed too: DevTools' throttling, sent to the page, does
// not reach them (the worker is a target of its own).
import http from 'node:http';

export async function startThrottle({ latency, downloadThroughput, uploadThroughput }) {
  // When the shared link is next free, in ms on the performance clock, per direction.
  const free = { down: 0, up: 0 };
  const after = (dir, bytes, rate) => {
    const start = Math.max(performance.now(), free[dir]);
    free[dir] = start + (bytes / rate) * 1000;
    return free[dir] - performance.now();
  };
  const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
  const server = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    if (body.length) await sleep(after('up', body.length, uploadThroughput));
    await sleep(latency);
    const target = new URL(req.url);
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        // Each chunk takes the link when the answer's previous chunk has left, so an answer the
        // browser gave up on (a page closed mid-download) stops taking it.
        let last = Promise.resolve();
        let closed = false;
        res.on('close', () => (closed = true));
        answer.on('data', (c) => {
          last = last.then(async () => {
            if (closed) return;
            await sleep(after('down', c.length, downloadThroughput));
            if (!closed) res.write(c);
          });
        });
        answer.on('end', () => last.then(() => res.end()));
      },
    );
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    upstream.end(body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    args: [`--proxy-server=http://127.0.0.1:${server.address().port}`, '--proxy-bypass-list=<-loopback>'],
    stop: () => server.close(),
  };
}
