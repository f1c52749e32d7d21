// Problem responses (RFC 9457, docs/api.md#errors) in words a person understands. The code is
// always shown next to the words, so a person can quote it and a test can find it. Codes not listed
// here fall back to the server's title and detail.

import { usd } from './dom.js';

const MESSAGES = {
  'review-required':
    'Another attempt may still finish. A reviewer must decide before trying another provider.',
  'job-closed': 'This job is already finished or cancelled, so nothing more can be started or stopped on it.',
  'attempt-limit-reached': 'This job has had as many attempts as one job may have. Submit a new job to try again.',
  'spend-budget-exceeded': 'Your money budget is used up (spent and reserved by calls under way). Try again later.',
  'budget-exceeded': "Today's token budget is spent. New jobs start again tomorrow (UTC).",
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

/**
 * Codes whose problem carries figures a person needs (docs/api.md#errors: extra members beside the
 * standard ones): the message says them. A problem without its figures gets the plain text above.
 */
const WITH_FIGURES = {
  'spend-budget-exceeded': (p) =>
    has(p, 'limitUsd', 'spentUsd', 'reservedUsd') &&
    `The ${p.period || ''} budget of ${usd(p.limitUsd)}${p.periodStartsOn ? ` (from ${p.periodStartsOn})` : ''} is used up: ` +
      `${usd(p.spentUsd)} spent and ${usd(p.reservedUsd)} reserved by calls under way. ` +
      'Nothing new starts until calls under way settle for less than they reserved, ' +
      `an operator raises the budget, or the next ${p.period || 'period'} begins.`,
  'budget-exceeded': (p) =>
    has(p, 'budgetTokens', 'spentTokensToday') &&
    `Today's token budget of ${p.budgetTokens} tokens is spent: providers reported ${p.spentTokensToday} tokens` +
      (p.unknownSpendAttemptsToday ? `, and ${p.unknownSpendAttemptsToday} attempts have not reported theirs` : '') +
      ` on ${p.day || 'this UTC day'}. New jobs start again tomorrow (UTC).`,
  'attempt-limit-reached': (p) =>
    has(p, 'attempts', 'limit') &&
    `This job has had ${p.attempts} attempts, the most one job may have (${p.limit}). Submit a new job to try again.`,
};

function has(p, ...members) {
  return members.every((m) => p[m] !== undefined && p[m] !== null);
}

/** { message, code, detail } for a problem object; detail only where it adds to the message. */
export function describe(problem) {
  const p = problem || {};
  const code = typeof p.code === 'string' && p.code ? p.code : codeFromType(p.type);
  const known = code && ((WITH_FIGURES[code] && WITH_FIGURES[code](p)) || MESSAGES[code]);
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
