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
