// Problem responses (RFC 9457, docs/api.md#errors) in words a person understands. The code is
// always shown next to the words, so a person can quote it and a test can find it. Codes not listed
// here fall back to the server's title and detail.

const MESSAGES = {
  'review-required':
    'Another attempt may still finish. A reviewer must decide before trying another provider.',
  'job-closed': 'This job is already finished or cancelled, so nothing more can be started or stopped on it.',
  'attempt-limit-reached': 'This job has had as many attempts as one job may have. Submit a new job to try again.',
  'fallback-disabled':
    'Trying another provider is switched off by an operator right now. Try again later.',
  'no-output': 'There is no patch to show yet: no attempt has won.',
  'idempotency-key-reused':
    'This request key was already used for a different request. Send the form again to submit it as a new request.',
  'idempotency-key-missing': 'The page sent the request without an Idempotency-Key. Reload the page and try again.',
  'idempotency-key-invalid': 'The page sent an Idempotency-Key the server does not accept. Reload the page and try again.',
  'unknown-provider': 'That provider is not available here. Choose one from the list.',
  'invalid-request': 'The server did not accept what was sent. Check the fields and try again.',
  unauthenticated: 'Your token is missing or expired; paste a new one.',
  'job-not-found': 'This job does not exist, or it is not yours to see.',
  forbidden: 'Your role does not allow this. A reviewer has to do it.',
  'payload-too-large': 'The request is too large. Shorten the prompt and try again.',
  'unsupported-media-type': 'The page sent the request in a format the server does not take. Reload the page.',
  'not-found': 'The server has nothing at this address.',
  internal: 'Something went wrong on the server. Try again in a moment.',
  'network-error': 'The server did not answer. Check the connection and try again.',
};

/** { message, code, detail } for a problem object; detail only where it adds to the message. */
export function describe(problem) {
  const p = problem || {};
  const code = typeof p.code === 'string' && p.code ? p.code : codeFromType(p.type);
  const known = code && MESSAGES[code];
  if (known) {
    return { message: known, code, detail: p.detail && p.detail !== known ? p.detail : '' };
  }
  const title = p.title || (p.status ? `The server answered ${p.status}.` : 'Something went wrong.');
  return { message: title, code: code || (p.status ? `http-${p.status}` : 'error'), detail: p.detail || '' };
}

function codeFromType(type) {
  if (typeof type !== 'string') return '';
  const match = /\/problems\/([a-z0-9-]+)$/.exec(type);
  return match ? match[1] : '';
}

/**
 * The element that shows a problem: role=alert, the message, the code in parentheses, and the
 * server's detail below in smaller type. `extra` is an optional sentence about what the page did.
 */
export function problemElement(problem, extra) {
  const { message, code, detail } = describe(problem);
  const box = document.createElement('div');
  box.className = 'problem';
  box.setAttribute('role', 'alert');
  box.dataset.testid = 'problem';
  box.dataset.code = code;
  const line = document.createElement('p');
  line.className = 'problem-message';
  const text = document.createElement('span');
  text.dataset.testid = 'problem-message';
  text.textContent = message;
  const codeEl = document.createElement('code');
  codeEl.dataset.testid = 'problem-code';
  codeEl.textContent = `(${code})`;
  line.append(text, ' ', codeEl);
  box.append(line);
  if (extra) {
    const more = document.createElement('p');
    more.textContent = extra;
    box.append(more);
  }
  if (detail) {
    const small = document.createElement('p');
    small.className = 'problem-detail';
    small.textContent = detail;
    box.append(small);
  }
  return box;
}
