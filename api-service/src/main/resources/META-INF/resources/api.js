// The page's only door to the HTTP API (docs/api.md): adds the bearer token, reads JSON, text and
// RFC 9457 problem bodies, and turns a failed connection into a problem too, so callers handle
// one shape. The token lives in sessionStorage: it survives a reload, not the closing of the tab.

const TOKEN_KEY = 'jobapi.token';

/** The bearer token of this tab, or null. */
export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
}

export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * The claims of a JWT, for display only (who is signed in, which roles). The server verifies the
 * token; the page never trusts these for anything but labels. Null when it does not parse.
 */
export function claimsOf(jwt) {
  const parts = (jwt || '').split('.');
  if (parts.length !== 3) return null;
  try {
    const base64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const padded = base64 + '='.repeat((4 - (base64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes));
    return claims && typeof claims === 'object' ? claims : null;
  } catch {
    return null;
  }
}

/**
 * Sends one request. Resolves (never rejects) with
 * { ok, status, headers, body } on 2xx (body: parsed JSON, or text for other types) and
 * { ok: false, status, headers, problem } otherwise; status 0 means no answer arrived.
 */
export async function call(method, path, { json, headers } = {}) {
  const sent = new Headers(headers);
  const bearer = token();
  if (bearer) sent.set('Authorization', `Bearer ${bearer}`);
  let body;
  if (json !== undefined) {
    sent.set('Content-Type', 'application/json');
    body = JSON.stringify(json);
  }
  let response;
  let text;
  try {
    response = await fetch(path, { method, headers: sent, body, cache: 'no-store' });
    text = await response.text();
  } catch (error) {
    return {
      ok: false,
      status: 0,
      headers: new Headers(),
      problem: {
        code: 'network-error',
        title: 'No answer from the server',
        status: 0,
        detail: String(error && error.message ? error.message : error),
      },
    };
  }
  const type = response.headers.get('Content-Type') || '';
  const parsed = type.includes('json') ? parseJson(text) : undefined;
  if (response.ok) {
    return { ok: true, status: response.status, headers: response.headers, body: parsed ?? text };
  }
  const problem =
    parsed && typeof parsed === 'object'
      ? { ...parsed }
      : { title: `HTTP ${response.status} ${response.statusText}`.trim(), detail: text.slice(0, 300) };
  problem.status = problem.status || response.status;
  return { ok: false, status: response.status, headers: response.headers, problem };
}

function parseJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Follows a Server-Sent Events stream (GET /jobs/{id}/events) with the tab's bearer token, which
 * an EventSource cannot send. Calls onEvent({ id, event, data }) for each event (data: parsed
 * JSON); comments (keep-alives) are skipped. Resolves with the last event id when the server ends
 * the stream; rejects when it cannot be opened (a problem answer, no answer) or breaks. Aborting
 * `signal` ends it.
 */
export async function stream(path, { lastEventId, signal, onEvent }) {
  const sent = new Headers({ Accept: 'text/event-stream' });
  const bearer = token();
  if (bearer) sent.set('Authorization', `Bearer ${bearer}`);
  if (lastEventId) sent.set('Last-Event-ID', lastEventId);
  const response = await fetch(path, { headers: sent, signal, cache: 'no-store' });
  if (!response.ok || !response.body) throw new Error(`the stream was answered ${response.status}`);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let last = lastEventId;
  let pending = '';
  let event = { id: null, event: 'message', data: [] };
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return last;
    pending += value;
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const raw of lines) {
      const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
      if (line === '') {
        if (event.data.length > 0) {
          if (event.id) last = event.id;
          onEvent({ id: event.id, event: event.event, data: parseJson(event.data.join('\n')) });
        }
        event = { id: null, event: 'message', data: [] };
      } else if (!line.startsWith(':')) {
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') event.data.push(text);
        else if (field === 'id') event.id = text;
        else if (field === 'event') event.event = text;
      }
    }
  }
}
