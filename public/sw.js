// Klaxon's service worker: the app opens offline with the pages last seen, and says so.
//
// - Pages (the incident list and incidents): from the network, asked for as the worker starts
//   (navigation preload), so a worker that was asleep adds no wait; the page is handed to the
//   browser as it arrives and kept meanwhile. Each one loaded is kept, so offline
//   the last copy is shown, as plain HTML (its scripts removed, so nothing acts on stale data),
//   under a banner saying when it was loaded. Another page offline leads to the incident list,
//   whose banner says that page is not available offline.
// - Site files: names carrying a content hash never change, so they come from the cache first;
//   the others from the network, the cache only offline. Once a build's main wasm is kept, so are
//   its pages' chunks, so a page opened later (from a push, say) takes its code from the phone,
//   and its stylesheet: the worker's page requests then name it (the navigation preload header)
//   and the server links it in place of the copy every page otherwise carries inline.
// - Anything else (the API, server functions, the event stream) goes to the network only. A form
//   sent offline is answered with a page saying that nothing was sent; nothing is queued.
// - Kept pages are one account's: each page names the session it was rendered for
//   (X-Klaxon-Account). A page of another account, a visit that ends at the sign-in page, and the
//   app's word that the account changed (a message sent on sign-in and sign-out) forget them, and
//   offline only the current account's copies are shown.

const PAGES = 'klaxon-pages-v1';
const FILES = 'klaxon-files-v1';
const SAVED_AT = 'x-klaxon-saved-at';
const ACCOUNT = 'x-klaxon-account';
// Where the pages cache records whose pages it holds.
const OWNER = '/__klaxon-account';
const KEEP_PAGES = 20;
// The query naming a page asked for offline that is not kept (`/?not-kept=/schedule`).
const NOT_KEPT = 'not-kept';
// A build's script and wasm live under /pkg/{content hash}/.
const BUILD_FILE = /^\/pkg\/[0-9a-f]{16}\//;

self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      await self.registration.navigationPreload?.enable().catch(() => {});
      const stale = (await caches.keys()).filter((n) => n !== PAGES && n !== FILES);
      await Promise.all(stale.map((n) => caches.delete(n)));
      await self.clients.claim();
    })(),
  );
});

// The app says the signed-in account is changing (sign-in, sign-up, sign-out).
self.addEventListener('message', (event) => {
  if (event.data === 'account-changed') event.waitUntil(caches.delete(PAGES));
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === 'navigate' && request.method === 'GET') {
    event.respondWith(page(event, url));
  } else if (request.mode === 'navigate') {
    event.respondWith(formPost(request));
  } else if (request.method === 'GET' && /\.[a-z0-9]+$/.test(url.pathname) && !url.pathname.startsWith('/api/')) {
    event.respondWith(file(request, url, event));
  }
});

function keptPage(url) {
  return url.pathname === '/' || /^\/incidents\/\d+$/.test(url.pathname);
}

async function page(event, url) {
  let response;
  try {
    response = (await event.preloadResponse) || (await fetch(event.request));
  } catch (offline) {
    return offlineCopyOf(url);
  }
  // A redirect (to sign in, say) is followed by the browser as a navigation of its own.
  if (response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400)) return response;
  // The browser reads the page as it arrives; keeping a copy does not hold it up.
  const copy = response.clone();
  event.waitUntil(remember(url, copy).catch(() => {}));
  return response;
}

/// Keeps `response`, the page at `url`, as its account's copy; a page without an account (or the
/// sign-in page) forgets every kept page.
async function remember(url, response) {
  const account = response.headers.get(ACCOUNT);
  if (!account || new URL(response.url || url).pathname === '/login') {
    await caches.delete(PAGES);
    return;
  }
  await claimFor(account);
  if (response.ok && keptPage(url) && !response.redirected) await keep(url, account, response);
}

async function offlineCopyOf(url) {
  const cache = await caches.open(PAGES);
  const owner = await (await cache.match(OWNER))?.text();
  const own = (c) => c && owner && c.headers.get(ACCOUNT) === owner;
  const copy = await cache.match(url.pathname);
  if (own(copy)) return offlineCopy(copy, url.pathname === '/' ? url.searchParams.get(NOT_KEPT) : null);
  // A page never kept: the incident list's copy under its own address, saying which page is
  // missing, rather than the list under an address that is not the list's.
  if (url.pathname !== '/' && own(await cache.match('/'))) {
    return Response.redirect(`/?${NOT_KEPT}=${encodeURIComponent(url.pathname + url.search)}`, 302);
  }
  return offlinePage('Klaxon cannot be reached and there is no copy of this page on this phone yet.');
}

/// Makes the kept pages `account`'s: another account's are forgotten first.
async function claimFor(account) {
  const owner = await (await (await caches.open(PAGES)).match(OWNER))?.text();
  if (owner === account) return;
  await caches.delete(PAGES);
  await (await caches.open(PAGES)).put(OWNER, new Response(account));
}

async function keep(url, account, response) {
  const html = await response.text();
  const headers = new Headers(response.headers);
  headers.set(SAVED_AT, String(Date.now()));
  headers.set(ACCOUNT, account);
  const cache = await caches.open(PAGES);
  await cache.put(url.pathname, new Response(html, { status: 200, headers }));
  const keys = (await cache.keys()).filter((k) => new URL(k.url).pathname !== OWNER);
  for (const old of keys.slice(0, Math.max(0, keys.length - KEEP_PAGES))) await cache.delete(old);
  // The stylesheet the page uses, so the copy looks the same offline.
  const css = html.match(/href="(\/pkg\/[^"]+\.css)"/);
  if (css) {
    const files = await caches.open(FILES);
    if (!(await files.match(css[1]))) await files.add(css[1]).catch(() => {});
  }
}

function clock(ms) {
  const d = new Date(ms);
  return `${String(d.getHours()).padStart(2, '0')}:${String(d.getMinutes()).padStart(2, '0')}`;
}

/// The kept `copy` as plain HTML under the offline banner; `missing`, a page that was asked for
/// and is not kept, is named first.
async function offlineCopy(copy, missing) {
  const savedAt = Number(copy.headers.get(SAVED_AT) || Date.now());
  const notKept = missing
    ? `${escapeHtml(missing)} is not available offline: it was not opened on this phone while online. `
    : '';
  const banner =
    `<div class="offline-banner" role="alert">${notKept}Offline, showing what you saw at ${clock(savedAt)}. ` +
    'Actions need a connection: nothing you do here is sent.</div>';
  const html = (await copy.text())
    .replace(/<script\b[^>]*>[\s\S]*?<\/script>/gi, '')
    .replace(/<link[^>]+rel="(?:modulepreload|preload)"[^>]*>/gi, '')
    .replace(/<body([^>]*)>/i, `<body$1>${banner}`);
  return new Response(html, {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
  });
}

function escapeHtml(text) {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function offlinePage(sentence) {
  const html =
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1"><title>Offline · Klaxon</title></head>' +
    `<body><main><h1>Offline</h1><p role="alert">${sentence}</p><p><a href="/">Try again</a></p></main></body></html>`;
  return new Response(html, {
    status: 503,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
  });
}

async function formPost(request) {
  try {
    return await fetch(request);
  } catch (offline) {
    return offlinePage(
      'You are offline, so Klaxon did not receive this and nothing was changed. Try again when the phone is back online.',
    );
  }
}

async function file(request, url, event) {
  const cache = await caches.open(FILES);
  // The build's folder, for a file that carries the content hash.
  const build = BUILD_FILE.exec(url.pathname)?.[0];
  if (build) {
    const hit = await cache.match(request);
    if (hit) {
      if (url.pathname === `${build}klaxon.wasm`) event.waitUntil(linkStylesheet(build).catch(() => {}));
      return hit;
    }
  }
  try {
    const response = await fetch(request);
    if (response.ok) {
      if (build) {
        // A new build: the files of the one before are not needed any more.
        for (const key of await cache.keys()) {
          const path = new URL(key.url).pathname;
          if (BUILD_FILE.test(path) && !path.startsWith(build)) await cache.delete(key);
        }
      }
      await cache.put(request, response.clone());
      if (url.pathname === `${build}klaxon.wasm`) event.waitUntil(keepChunks(build));
    }
    return response;
  } catch (offline) {
    const hit = await cache.match(request);
    if (hit) return hit;
    throw offline;
  }
}

// The build whose stylesheet the navigation preload header names (see `linkStylesheet`).
let linked = null;

/// Keeps the stylesheet of the build in folder `build` and names it in the header of the pages
/// the worker asks for, so the server links it rather than putting it in each page.
async function linkStylesheet(build) {
  if (linked === build || !self.registration.navigationPreload) return;
  const css = `${build}klaxon.css`;
  const files = await caches.open(FILES);
  if (!(await files.match(css))) await files.add(css);
  await self.registration.navigationPreload.setHeaderValue(css);
  linked = build;
}

/// Fetches and keeps the chunks (lazy routes) of the build in folder `build`, as its split
/// manifest lists them, and its stylesheet; a chunk that fails is fetched when its page needs it.
async function keepChunks(build) {
  const cache = await caches.open(FILES);
  await linkStylesheet(build).catch(() => {});
  try {
    const manifest = await (await fetch(`${build}__wasm_split_manifest.json`)).json();
    const chunks = new Set(Object.values(manifest).flat());
    for (const chunk of chunks) {
      const url = `${build}${chunk}.wasm`;
      if (!(await cache.match(url))) await cache.add(url);
    }
  } catch (failed) {
    // Offline or a build without chunks: nothing to keep.
  }
}

// Web Push pages. Each push is one page as the server composed it: a title, a body, the
// incident's address, the Acknowledge URL (a POST that needs no session, so it works with the
// app closed), and a tag per incident, so the all-clear replaces the page's notification. A page
// stays on screen until it is handled; the all-clear does not. iOS shows no action buttons: a tap
// opens the incident there.
self.addEventListener('push', (event) => {
  let data;
  try {
    data = event.data ? event.data.json() : {};
  } catch (notJson) {
    data = { title: 'Klaxon', body: event.data ? event.data.text() : '' };
  }
  const page = data.kind !== 'all_clear' && data.kind !== 'test';
  const actions = [];
  if (data.ack_url) actions.push({ action: 'ack', title: 'Acknowledge' });
  actions.push({ action: 'open', title: 'Open' });
  const tag = data.tag || 'klaxon';
  event.waitUntil(
    self.registration
      .showNotification(data.title || 'Klaxon', {
        body: data.body || '',
        tag,
        renotify: true,
        requireInteraction: page,
        icon: '/icons/icon-192.png',
        badge: '/icons/icon-192.png',
        data: { url: data.url || '/', ack_url: data.ack_url || null },
        actions,
      })
      // Open windows of the app hear that a push is on screen (`klaxon-push-shown`), so they
      // can reload what it is about.
      .then(() => self.clients.matchAll({ type: 'window' }))
      .then((windows) => windows.forEach((w) => w.postMessage({ type: 'klaxon-push-shown', tag }))),
  );
});

self.addEventListener('notificationclick', (event) => {
  event.waitUntil(act(event.notification, event.action));
});

/// What a tap on a page's notification does: its Acknowledge button acknowledges; the Open
/// button, or the notification itself (all iOS offers), opens the incident.
async function act(notification, action) {
  const { url, ack_url: ackUrl } = notification.data || {};
  notification.close();
  if (action === 'ack' && ackUrl) return acknowledge(notification, ackUrl, url);
  return openPage(url || '/');
}

/// Acknowledges from the notification, and says what came of it in its place.
async function acknowledge(notification, ackUrl, url) {
  let body;
  let done = false;
  try {
    const response = await fetch(ackUrl, { method: 'POST' });
    done = response.ok;
    if (done) {
      body = 'Acknowledged: it is yours.';
    } else {
      const why = await response.json().catch(() => ({}));
      body = why.message ? `Not acknowledged: ${why.message}.` : `Not acknowledged (${response.status}).`;
    }
  } catch (offline) {
    body = 'Offline: not acknowledged. Open Klaxon to try again.';
  }
  await self.registration.showNotification(notification.title, {
    body,
    tag: notification.tag,
    requireInteraction: !done,
    icon: '/icons/icon-192.png',
    data: { url, ack_url: done ? null : ackUrl },
    actions: done ? [{ action: 'open', title: 'Open' }] : [{ action: 'ack', title: 'Acknowledge' }, { action: 'open', title: 'Open' }],
  });
}

/// Focuses a window of the app on `url`, or opens one.
async function openPage(url) {
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  for (const client of windows) {
    if (new URL(client.url).origin === self.location.origin && 'focus' in client) {
      await client.focus();
      return client.navigate ? client.navigate(url) : undefined;
    }
  }
  return self.clients.openWindow(url);
}
