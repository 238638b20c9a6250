// A Node integrator's client of GET /v1/quote/stream, with the eventsource
// package (the WHATWG EventSource for Node). It prints one JSON line per
// thing it sees, for cmd/swapgate/quote_stream_e2e_test.go to read:
//
//   {"open": {"status": 200, "headers": {...}}}   the answer's head
//   {"event": "route", "data": "..."}              each event, data as sent
//   {"failure": "...", "code": 400}                the connection failed
//
// Usage: node client.mjs URL [API_KEY] [--close-after-route]
//
// The stream is one-shot: the client closes its EventSource on done (and
// on a failed connection), since an EventSource left open reconnects, and
// every reconnection would be a new quote. With --close-after-route it
// leaves after the first route event, as a client that lost interest.
import { EventSource } from 'eventsource';

const args = process.argv.slice(2);
const closeAfterRoute = args.includes('--close-after-route');
const [url, key] = args.filter((a) => !a.startsWith('--'));
const print = (o) => process.stdout.write(JSON.stringify(o) + '\n');

const es = new EventSource(url, {
  // The fetch the EventSource uses, with the partner key (an EventSource
  // sends no headers of its own) and a look at the answer's head.
  fetch: async (input, init) => {
    const headers = { ...init.headers };
    if (key) headers['X-API-Key'] = key;
    const res = await fetch(input, { ...init, headers });
    print({ open: { status: res.status, headers: Object.fromEntries(res.headers) } });
    return res;
  },
});

const bound = setTimeout(() => {
  print({ failure: 'no done within 30 s' });
  es.close();
  process.exit(2);
}, 30_000);

// Events that came in the same read as the one that closed the
// EventSource are still dispatched: closed drops them.
let closed = false;
const finish = (code) => {
  closed = true;
  es.close();
  clearTimeout(bound);
  process.exitCode = code;
};

for (const name of ['route', 'best', 'done']) {
  es.addEventListener(name, (e) => {
    if (closed) return;
    print({ event: name, data: e.data });
    if (name === 'done' || (name === 'route' && closeAfterRoute)) finish(0);
  });
}

// The server's error event and the EventSource's own connection failures
// share the name: the server's is a MessageEvent with data.
es.addEventListener('error', (e) => {
  if (closed) return;
  if (typeof e.data === 'string') {
    print({ event: 'error', data: e.data });
    return; // done follows
  }
  print({ failure: e.message ?? 'the connection failed', code: e.code ?? null });
  finish(1);
});
