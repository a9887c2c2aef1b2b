// bufscope's service worker: keeps the site's own files in the Cache API, so that the
// hosted page opens and works with no network after its first visit. boot.js registers it
// on http(s) only, when the site was made by `./dev dist`, which writes this file into
// dist/ with the two lines below filled in (src/web/dist.mjs): every file of dist/ but this
// one and bufscope.html, and a version made from their contents. A new build has new hashed
// names, hence a new version: the browser installs the new worker, which fills a new cache
// and deletes the old one.
//
// Cache-first for those files (the folder itself is its index.html); every other request
// (another path, another origin, not a GET) is left to the browser untouched: the worker
// asks nothing of anywhere else, and the page's Content-Security-Policy still applies.
const VERSION = 'unbuilt';
const FILES = [];

const CACHE = `bufscope-${VERSION}`;
const SCOPE = new URL('./', self.location.href).href;
const OURS = new Set(FILES.map((f) => new URL(f, SCOPE).href));

self.addEventListener('install', (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(CACHE);
      // `no-cache`: the copies kept are the server's, not the HTTP cache's.
      await cache.addAll([...OURS].map((url) => new Request(url, { cache: 'no-cache' })));
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) {
        if (key.startsWith('bufscope-') && key !== CACHE) await caches.delete(key);
      }
      await self.clients.claim();
    })(),
  );
});

self.addEventListener('fetch', (event) => {
  const { request } = event;
  if (request.method !== 'GET') return;
  const url = new URL(request.url);
  url.search = '';
  url.hash = '';
  if (url.href === SCOPE) url.href = `${SCOPE}index.html`;
  if (!OURS.has(url.href)) return;
  event.respondWith(
    (async () => {
      const cache = await caches.open(CACHE);
      return (await cache.match(url.href, { ignoreVary: true })) || fetch(request);
    })(),
  );
});
