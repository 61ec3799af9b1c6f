// A recording ntfy server for the browser tests: ntfy itself cannot run here. It speaks ntfy's
// JSON publish protocol as ntfy documents it (docs/publish.md, "Publish as JSON": a POST of a
// JSON object to the server's root URL, with `topic` required and `title`, `message`, `priority`
// 1–5, `tags`, `click` and `actions` optional), refuses what ntfy refuses (no topic, a message
// over 4096 bytes, a priority out of range) with ntfy's error body, and records what it accepted.
import http from 'node:http';

export async function startNtfy() {
  const published = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const refuse = (code, error) => {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code, http: 400, error }));
      };
      if (req.method !== 'POST' || req.url !== '/') return refuse(40001, 'invalid request: only JSON to the root URL here');
      let m;
      try {
        m = JSON.parse(body);
      } catch {
        return refuse(40024, 'invalid request: request body must be message JSON');
      }
      if (typeof m.topic !== 'string' || !/^[-_A-Za-z0-9]{1,64}$/.test(m.topic)) return refuse(40009, 'invalid topic');
      if (Buffer.byteLength(m.message ?? '') > 4096) return refuse(41301, 'message too large');
      if (m.priority !== undefined && !(m.priority >= 1 && m.priority <= 5)) return refuse(40007, 'invalid priority');
      published.push({ ...m, at: Date.now() });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: String(published.length), time: Math.floor(Date.now() / 1000), event: 'message', topic: m.topic }));
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, published, stop: () => server.close() };
}
