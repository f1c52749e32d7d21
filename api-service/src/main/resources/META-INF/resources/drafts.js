// Pending writes that carry an Idempotency-Key (docs/api.md): the job draft of "Generate patch" and
// one pending attempt request per job. Each is stored in sessionStorage BEFORE it is sent, so a
// double click, a lost answer and a reload all resend the same key and the server answers with
// the same job or attempt instead of making a second one. A draft is settled (removed) only by
// an answer that decides it; see settles().

const PREFIX = 'jobapi.pending.';

/** The stored draft { key, body, sub } of this scope, or null. */
export function pending(scope) {
  const raw = sessionStorage.getItem(PREFIX + scope);
  if (!raw) return null;
  try {
    const draft = JSON.parse(raw);
    return draft && typeof draft.key === 'string' ? draft : null;
  } catch {
    return null;
  }
}

/**
 * The draft to send for this body: the pending one when it holds the same body for the same
 * subject (so its key is reused), else a new one with a fresh key. Stored before it is returned.
 */
export function prepare(scope, body, sub) {
  const existing = pending(scope);
  if (existing && existing.sub === sub && canonical(existing.body) === canonical(body)) {
    return existing;
  }
  const draft = { key: newKey(), body, sub };
  sessionStorage.setItem(PREFIX + scope, JSON.stringify(draft));
  return draft;
}

/** Removes the draft of this scope if it is still the one sent with this key. */
export function settle(scope, key) {
  const existing = pending(scope);
  if (existing && existing.key === key) sessionStorage.removeItem(PREFIX + scope);
}

export function discard(scope) {
  sessionStorage.removeItem(PREFIX + scope);
}

/** Removes every draft (sign-out: they belong to the subject who made them). */
export function discardAll() {
  for (let i = sessionStorage.length - 1; i >= 0; i--) {
    const name = sessionStorage.key(i);
    if (name && name.startsWith(PREFIX)) sessionStorage.removeItem(name);
  }
}

/**
 * Whether an answer with this status decides the draft. A 2xx made (or replayed) it; any other
 * 4xx refuses this very body for good, so sending it again could only repeat the refusal. Not
 * deciding: no answer (0), 401 (a new token will resend it), 408, 429 and 5xx (try again later).
 */
export function settles(status) {
  if (status >= 200 && status < 300) return true;
  return status >= 400 && status < 500 && status !== 401 && status !== 408 && status !== 429;
}

/** JSON with sorted keys, so two bodies with the same content compare equal. */
export function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** A random UUID v4; crypto.randomUUID where the page is a secure context, else built by hand. */
function newKey() {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
