// The job page: sign-in, "Generate patch", the caller's jobs, and one job at #/jobs/{id}.
//
// Two rules shape this file. Buttons come only from the job's `actions` (the server decides what
// the caller may do; the page keeps no state of its own about it). Every write that may create
// something carries an Idempotency-Key that is stored before the request is sent (drafts.js), so
// a double click, a lost answer or a reload resends the same key and lands on the same job.

import * as api from './api.js';
import * as drafts from './drafts.js';
import * as operatorConsole from './console.js';
import { fromMicros, h, micros, timeElement, usd } from './dom.js';
import { problemElement } from './problems.js';

/** The providers a job may name, the default first, as GET /me says: the page keeps no list of its own. */
let providers = [];
/** How often an open job is read again (ms) when its event stream is not available. */
const POLL_MS = 1000;
/** Streams that failed in a row before the page polls the job for good (until another job is shown). */
const STREAM_FAILURES = 3;
/** A burst of events is followed by one read of the job, this long (ms) after its last event. */
const READ_AFTER_EVENTS_MS = 150;
/** After this many failed reads in a row the page says the connection is lost (it keeps trying). */
const QUIET_FAILURES = 2;
const CLOSED_STATES = new Set(['completed', 'cancelled']);
const JOB_DRAFT = 'job';
const attemptScope = (jobId) => `attempt:${jobId}`;

const $ = (id) => document.getElementById(id);

/** What the job panel shows now; `generation` changes when another job (or none) is shown. */
const view = {
  jobId: null,
  generation: 0,
  seq: 0,
  timer: 0,
  failures: 0,
  state: null,
  actionsKey: null,
  outputFor: null,
  timelineMissing: false,
  resumedAttempt: false,
  stream: null,
  lastEventId: null,
  streamFailures: 0,
};
let submitsInFlight = 0;
let jobsCursor = null;

// ------------------------------------------------------------------ helpers ---

function show(container, problem, extra) {
  container.replaceChildren(problemElement(problem, extra));
}

function clear(...containers) {
  for (const c of containers) c.replaceChildren();
}

function currentSub() {
  const claims = api.claimsOf(api.token());
  return claims ? String(claims.sub ?? claims.upn ?? '') : '';
}

function providerSelect(attrs, selected) {
  const select = h('select', attrs);
  for (const p of providers) {
    // defaultSelected too, so that form.reset() comes back to this choice.
    select.append(h('option', { value: p, text: p, selected: p === selected, defaultSelected: p === selected }));
  }
  return select;
}

// ------------------------------------------------------------------ sign-in ---

function renderAuth() {
  const bearer = api.token();
  $('signin').hidden = Boolean(bearer);
  $('app').hidden = !bearer;
  $('whoami').hidden = !bearer;
  if (!bearer) return;
  const claims = api.claimsOf(bearer) || {};
  $('who-sub').textContent = claims.sub ?? claims.upn ?? 'unknown subject';
  const groups = Array.isArray(claims.groups) ? claims.groups : [];
  $('who-roles').textContent = groups.length ? `(${groups.join(', ')})` : '';
}

function signIn(event) {
  event.preventDefault();
  const value = $('token-input').value.trim().replace(/^Bearer\s+/i, '');
  if (!api.claimsOf(value)) {
    show($('signin-problem'), {
      code: 'invalid-token',
      title: 'That does not look like a token: paste the whole line that bin/jobctl token printed.',
    });
    return;
  }
  api.setToken(value);
  $('token-input').value = '';
  clear($('signin-problem'));
  start();
}

function signOut() {
  api.clearToken();
  drafts.discardAll();
  stopJob();
  operatorConsole.stop();
  clear($('jobs-list'), $('submit-problem'), $('jobs-problem'), $('signin-problem'));
  $('submit-status').textContent = '';
  renderAuth();
  $('token-input').focus();
}

/** A 401 anywhere: the token is gone or expired. Drafts stay; a new token resends them. */
function unauthenticated(problem) {
  api.clearToken();
  stopJob();
  operatorConsole.stop();
  renderAuth();
  show($('signin-problem'), problem);
}

/**
 * Reads GET /me once, before anything is drawn with it: the providers a job may name (a resumed
 * draft's choice too) and the console sections this caller gets. Null when the token was refused.
 */
async function readMe() {
  const r = await api.call('GET', '/me');
  if (r.status === 401) {
    unauthenticated(r.problem);
    return null;
  }
  const me = r.ok && r.body ? r.body : {};
  providers = Array.isArray(me.providers) ? me.providers : [];
  $('provider').replaceChildren(...providers.map((p) => h('option', { value: p, text: p })));
  view.actionsKey = null;
  return me;
}

async function start() {
  renderAuth();
  if (!api.token()) return;
  const me = await readMe();
  if (!me) return;
  refreshJobs();
  route();
  resumeJobDraft();
  operatorConsole.start({ me, onUnauthenticated: unauthenticated });
}

// ------------------------------------------------------------ submit a job ---

function formBody() {
  return {
    input: {
      prompt: $('prompt').value,
      repository: $('repository').value.trim(),
      baseRef: $('base-ref').value.trim(),
    },
    // No provider configured: the server's answer (unknown-provider) says so, not an empty name.
    ...($('provider').value ? { provider: $('provider').value } : {}),
  };
}

function submitJob(event) {
  event.preventDefault();
  const draft = drafts.prepare(JOB_DRAFT, formBody(), currentSub());
  sendJobDraft(draft, 'Sending');
}

/** On load: a draft that got no deciding answer is sent again, with its key. */
function resumeJobDraft() {
  const draft = drafts.pending(JOB_DRAFT);
  if (!draft) return;
  if (draft.sub !== currentSub()) {
    drafts.discard(JOB_DRAFT);
    return;
  }
  const input = (draft.body && draft.body.input) || {};
  $('prompt').value = input.prompt ?? '';
  $('repository').value = input.repository ?? 'demo';
  $('base-ref').value = input.baseRef ?? 'main';
  if (draft.body.provider) $('provider').value = draft.body.provider;
  sendJobDraft(draft, 'Resending your earlier request');
}

async function sendJobDraft(draft, verb) {
  submitsInFlight++;
  $('submit-button').disabled = true;
  clear($('submit-problem'));
  $('submit-status').textContent = `${verb} (Idempotency-Key ${draft.key})…`;
  try {
    const r = await api.call('POST', '/jobs', { json: draft.body, headers: { 'Idempotency-Key': draft.key } });
    if (r.ok && r.body && r.body.id) {
      drafts.settle(JOB_DRAFT, draft.key);
      const replayed = r.headers.get('Idempotent-Replayed') === 'true';
      $('submit-status').textContent = replayed
        ? 'Already submitted: this is the same job as before.'
        : 'Job created.';
      if (drafts.canonical(formBody()) === drafts.canonical(draft.body)) $('prompt').value = '';
      openJob(r.body.id);
      refreshJobs();
      return;
    }
    if (r.status === 401) {
      unauthenticated(r.problem);
      return;
    }
    const settled = drafts.settles(r.status);
    if (settled) drafts.settle(JOB_DRAFT, draft.key);
    $('submit-status').textContent = '';
    show(
      $('submit-problem'),
      r.problem,
      settled
        ? ''
        : 'Your request is kept: pressing "Generate patch" again, or reloading the page, sends it again with the same key, so it cannot make a second job.',
    );
  } finally {
    submitsInFlight--;
    if (submitsInFlight === 0) $('submit-button').disabled = false;
  }
}

// ----------------------------------------------------------------- job list ---

async function refreshJobs(more = false) {
  const query = more && jobsCursor ? `?limit=20&cursor=${encodeURIComponent(jobsCursor)}` : '?limit=20';
  const r = await api.call('GET', `/jobs${query}`);
  if (!r.ok) {
    if (r.status === 401) unauthenticated(r.problem);
    else show($('jobs-problem'), r.problem);
    return;
  }
  clear($('jobs-problem'));
  const items = Array.isArray(r.body.items) ? r.body.items : [];
  const list = $('jobs-list');
  if (!more) list.replaceChildren();
  for (const job of items) list.append(jobListItem(job));
  jobsCursor = r.body.nextCursor || null;
  $('jobs-more').hidden = !jobsCursor;
  $('jobs-empty').hidden = list.children.length > 0;
  markCurrentJob();
}

function jobListItem(job) {
  const prompt = (job.input && typeof job.input.prompt === 'string' && job.input.prompt) || '(no prompt)';
  return h(
    'li',
    { 'data-testid': 'job-item', 'data-job-id': job.id, 'data-state': job.state },
    h('a', { href: `#/jobs/${job.id}`, 'data-testid': 'job-link', text: prompt }),
    h('span', { class: `badge state-${job.state}`, text: job.state.replace(/_/g, ' ') }),
    timeElement(job.createdAt),
  );
}

function markCurrentJob() {
  for (const item of $('jobs-list').children) {
    const link = item.querySelector('a');
    if (item.dataset.jobId === view.jobId) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

// ---------------------------------------------------------------- routing ---

function jobIdFromHash() {
  const match = /^#\/jobs\/([^/?#]+)$/.exec(location.hash);
  return match ? decodeURIComponent(match[1]) : null;
}

function openJob(id) {
  const target = `#/jobs/${encodeURIComponent(id)}`;
  if (location.hash === target) {
    if (view.jobId !== id) route();
  } else {
    location.hash = target;
  }
}

function route() {
  if (!api.token()) return;
  const id = jobIdFromHash();
  if (id === view.jobId) return;
  stopJob();
  if (!id) return;
  view.jobId = id;
  $('job-empty').hidden = true;
  $('job-short').textContent = ` ${id.slice(0, 8)}`;
  $('job-polling').textContent = 'Loading…';
  markCurrentJob();
  $('job-title').focus({ preventScroll: false });
  poll(0);
}

function stopJob() {
  clearTimeout(view.timer);
  view.stream?.abort();
  Object.assign(view, {
    jobId: null,
    generation: view.generation + 1,
    failures: 0,
    state: null,
    actionsKey: null,
    outputFor: null,
    timelineMissing: false,
    resumedAttempt: false,
    stream: null,
    lastEventId: null,
    streamFailures: 0,
  });
  $('job-panel').hidden = true;
  $('job-empty').hidden = false;
  $('job-short').textContent = '';
  document.title = 'Job API';
  clear($('job-problem'), $('action-problem'), $('job-actions'), $('attempts-body'), $('output-diff'));
  clear($('output-problem'), $('timeline-list'));
  $('output').hidden = true;
  $('timeline').hidden = true;
  $('action-status').textContent = '';
  markCurrentJob();
}

// ---------------------------------------------------------------- one job ---

/**
 * Reads the job after `delay` ms. While it is open the page follows its event stream and reads
 * the job again after each burst of events; when the stream is not available, every POLL_MS.
 */
function poll(delay) {
  clearTimeout(view.timer);
  view.timer = setTimeout(readJob, delay);
}

async function readJob() {
  const { generation, jobId } = view;
  const seq = ++view.seq;
  const r = await api.call('GET', `/jobs/${encodeURIComponent(jobId)}`);
  if (generation !== view.generation || seq !== view.seq) return; // another job, or a newer read
  if (!r.ok) {
    if (r.status === 401) {
      unauthenticated(r.problem);
    } else if (r.status === 0 || r.status >= 500) {
      view.failures++;
      if (view.failures >= QUIET_FAILURES) {
        show($('job-problem'), r.problem, 'Still trying every second.');
      }
      poll(POLL_MS);
    } else {
      $('job-panel').hidden = true;
      show($('job-problem'), r.problem);
    }
    return;
  }
  view.failures = 0;
  clear($('job-problem'));
  renderJob(r.body);
  if (!CLOSED_STATES.has(r.body.state)) keepWatching();
}

/** Follows the open job's stream, or polls it when streams kept failing. */
function keepWatching() {
  if (view.streamFailures >= STREAM_FAILURES) {
    poll(POLL_MS);
  } else if (!view.stream) {
    follow();
  }
}

/**
 * Opens the job's event stream after the last event seen. Each event schedules one read of the
 * job; the stream's end (after the job's last event, or the server stopping) reads it once more,
 * which follows again if the job is still open. A failed stream falls back to a read a second later.
 */
function follow() {
  const { generation, jobId } = view;
  const controller = new AbortController();
  view.stream = controller;
  $('job-polling').textContent = 'Live.';
  api
    .stream(`/jobs/${encodeURIComponent(jobId)}/events`, {
      lastEventId: view.lastEventId,
      signal: controller.signal,
      onEvent: (event) => {
        if (generation !== view.generation) return;
        view.lastEventId = event.id;
        view.streamFailures = 0;
        poll(READ_AFTER_EVENTS_MS);
      },
    })
    .then(
      () => {
        if (generation !== view.generation) return;
        view.stream = null;
        poll(0);
      },
      () => {
        if (generation !== view.generation || controller.signal.aborted) return;
        view.stream = null;
        view.streamFailures++;
        poll(POLL_MS);
      },
    );
}

function renderJob(job) {
  const previous = view.state;
  view.state = job.state;
  $('job-panel').hidden = false;
  $('job-empty').hidden = true;
  const state = $('job-state');
  state.textContent = job.state.replace(/_/g, ' ');
  state.className = `badge state-${job.state}`;
  state.dataset.state = job.state;
  const closed = CLOSED_STATES.has(job.state);
  $('job-polling').textContent = closed ? '' : view.stream ? 'Live.' : 'Updating every second.';
  document.title = `Job ${job.id.slice(0, 8)} (${job.state}) · Job API`;

  const input = job.input || {};
  $('job-prompt').textContent = input.prompt ?? JSON.stringify(input);
  $('job-repo').textContent = [input.repository, input.baseRef].filter(Boolean).join(' @ ') || '—';
  $('job-provider').textContent = job.provider || 'default';
  $('job-id').textContent = job.id;
  $('job-key').textContent = job.idempotencyKey || '';
  const review = $('job-review');
  review.hidden = !(job.state === 'needs_review' && job.reviewReason);
  review.textContent = job.reviewReason ? `Needs review: ${job.reviewReason}` : '';

  const attempts = Array.isArray(job.attempts) ? job.attempts : [];
  const winner = attempts.find((a) => a.id === job.winningAttemptId);
  $('job-winner').textContent = winner
    ? `Attempt ${attempts.indexOf(winner) + 1} (${winner.provider})`
    : job.winningAttemptId || 'None yet';
  $('attempts-body').replaceChildren(...attempts.map((a, i) => attemptRow(a, i, job)));
  renderCost(job, attempts);

  renderActions(job, attempts);
  if ((job.actions || []).includes('fetch_output')) loadOutput(job);
  if (!view.timelineMissing) loadTimeline(job);
  if (!view.resumedAttempt) {
    view.resumedAttempt = true;
    resumeAttemptDraft(job);
  }
  if (previous !== null && previous !== job.state) refreshJobs();
}

/**
 * A reservation is held while the call may still report usage: from the claim (`starting`) until
 * its usage is known (an `unknown` or quarantined attempt keeps it). The API says what was reserved,
 * not whether it is still held, so the page shows it only for attempts in those states with no cost.
 */
function reservationHeld(a) {
  return a.costUsd == null && a.reservedUsd != null && (a.state === 'starting' || a.state === 'unknown');
}

/** What an attempt cost (costUsd), or the most it may cost while its call is under way (reservedUsd). */
function costCell(a) {
  if (a.costUsd != null) {
    return h('td', { 'data-testid': 'attempt-cost', 'data-usd': a.costUsd, text: usd(a.costUsd) });
  }
  if (reservationHeld(a)) {
    return h('td', {
      'data-testid': 'attempt-cost',
      'data-reserved-usd': a.reservedUsd,
      title: "Reserved in the owner's budgets at the claim: the most this call can cost",
      text: `up to ${usd(a.reservedUsd)} reserved`,
    });
  }
  return h('td', { 'data-testid': 'attempt-cost', text: '—' });
}

/**
 * The job's cost: the sum of its listed attempts' costs (exact, in millionths), what calls under
 * way hold besides, and how many attempts carry no cost (no usage reported, or no price in force).
 */
function renderCost(job, attempts) {
  let spent = 0;
  let reserved = 0;
  let costed = 0;
  let holding = 0;
  for (const a of attempts) {
    if (a.costUsd != null) {
      spent += micros(a.costUsd);
      costed++;
    } else if (reservationHeld(a)) {
      reserved += micros(a.reservedUsd);
      holding++;
    }
  }
  const cell = $('job-cost');
  cell.dataset.usd = fromMicros(spent);
  cell.dataset.reservedUsd = fromMicros(reserved);
  const parts = [];
  if (costed) parts.push(`${usd(fromMicros(spent))} for ${costed === 1 ? '1 attempt' : `${costed} attempts`}`);
  if (holding) {
    parts.push(`up to ${usd(fromMicros(reserved))} reserved by ${holding === 1 ? 'the call' : `${holding} calls`} under way`);
  }
  const uncosted = attempts.length - costed - holding;
  if (!parts.length) parts.push(attempts.length ? 'no cost reported' : 'nothing yet');
  else if (uncosted) parts.push(`${uncosted === 1 ? '1 attempt' : `${uncosted} attempts`} without a cost`);
  const total = job.attemptsTotal ?? attempts.length;
  if (total > attempts.length) parts.push(`counting the newest ${attempts.length} of ${total} attempts`);
  cell.textContent = parts.join('; ');
}

function attemptRow(a, index, job) {
  const usage = a.usage
    ? `${a.usage.promptTokens ?? '?'} / ${a.usage.completionTokens ?? '?'}`
    : '—';
  const source = a.usage ? (a.usage.source === 'provider_reported' ? 'reported by provider' : a.usage.source) : '';
  const reasonParts = [a.reason, a.reviewedBy ? `(by ${a.reviewedBy})` : '', a.quarantined ? '[held: usage unknown]' : '']
    .filter(Boolean)
    .join(' ');
  const isWinner = a.id === job.winningAttemptId;
  return h(
    'tr',
    { 'data-testid': 'attempt-row', 'data-attempt-id': a.id, 'data-state': a.state, class: isWinner ? 'winner' : '' },
    h('td', { text: String(index + 1) }),
    h('td', { 'data-testid': 'attempt-provider', text: a.provider }),
    h(
      'td',
      {},
      h('span', { class: `badge state-${a.state}`, 'data-testid': 'attempt-state', text: a.state }),
      isWinner ? h('span', { class: 'badge winner-badge', 'data-testid': 'attempt-winner', text: 'winner' }) : null,
    ),
    h('td', { 'data-testid': 'attempt-reason', text: reasonParts || '—' }),
    h('td', {}, h('code', { 'data-testid': 'attempt-remote-id', text: a.remoteId || '—' })),
    h(
      'td',
      { 'data-testid': 'attempt-usage' },
      h('span', { text: usage }),
      source ? h('span', { class: 'hint block', 'data-testid': 'attempt-usage-source', text: source }) : null,
    ),
    costCell(a),
    h('td', {}, timeElement(a.createdAt)),
  );
}

// --------------------------------------------------------------- actions ---

/**
 * Draws exactly the buttons named by `actions`. Redrawn only when that list or the number of
 * attempts changes, so a reason being typed survives the once-a-second reads.
 */
function renderActions(job, attempts) {
  const actions = Array.isArray(job.actions) ? job.actions : [];
  const key = `${job.id}|${actions.join(',')}|${attempts.length}`;
  if (key === view.actionsKey) return;
  view.actionsKey = key;
  const box = $('job-actions');
  box.replaceChildren();
  const last = attempts[attempts.length - 1];
  const other = providers.find((p) => !last || p !== last.provider) || providers[0];
  if (actions.includes('request_attempt')) box.append(requestAttemptForm(job, other));
  if (actions.includes('supersede')) box.append(supersedeForm(job, other));
  if (actions.includes('cancel')) {
    box.append(
      h('button', {
        type: 'button',
        class: 'danger',
        'data-testid': 'action-cancel',
        text: 'Cancel job',
        onclick: (e) => cancelJob(job, e.currentTarget),
      }),
    );
  }
  if (!box.children.length) {
    box.append(h('p', { class: 'hint', 'data-testid': 'no-actions', text: 'No actions available on this job now.' }));
  }
}

function requestAttemptForm(job, provider) {
  const select = providerSelect({ id: 'attempt-provider', 'data-testid': 'request-attempt-provider' }, provider);
  const form = h(
    'form',
    { class: 'inline-form', 'data-testid': 'request-attempt-form' },
    h('label', { for: 'attempt-provider', text: 'Provider' }),
    select,
    h('button', { type: 'submit', 'data-testid': 'action-request-attempt', text: 'Try another provider' }),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    sendAttempt(job.id, { provider: select.value }, form);
  });
  return form;
}

function supersedeForm(job, provider) {
  const select = providerSelect({ id: 'supersede-provider', 'data-testid': 'supersede-provider' }, provider);
  const reason = h('textarea', {
    id: 'supersede-reason',
    'data-testid': 'supersede-reason',
    rows: 2,
    required: true,
    maxLength: 500,
    'aria-describedby': 'supersede-help',
  });
  const form = h(
    'form',
    { class: 'supersede', 'data-testid': 'supersede-form' },
    h(
      'fieldset',
      {},
      h('legend', { text: 'Supersede the open attempt (reviewer)' }),
      h('p', {
        id: 'supersede-help',
        class: 'hint',
        text:
          'An earlier attempt may still finish. Superseding records your reason, marks it superseded, ' +
          'and starts a new attempt on the provider you choose; a late result from it is never applied.',
      }),
      h('label', { for: 'supersede-reason', text: 'Reason (required)' }),
      reason,
      h('label', { for: 'supersede-provider', text: 'New attempt on' }),
      select,
      h('button', { type: 'submit', 'data-testid': 'action-supersede', text: 'Supersede' }),
    ),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const why = reason.value.trim();
    if (!why) {
      reason.setCustomValidity('Say why the open attempt is superseded.');
      reason.reportValidity();
      return;
    }
    sendAttempt(job.id, { provider: select.value, supersede: { reason: why } }, form);
  });
  reason.addEventListener('input', () => reason.setCustomValidity(''));
  return form;
}

/** On the first read of a job: an attempt request that got no deciding answer is sent again. */
function resumeAttemptDraft(job) {
  const draft = drafts.pending(attemptScope(job.id));
  if (!draft) return;
  if (draft.sub !== currentSub()) {
    drafts.discard(attemptScope(job.id));
    return;
  }
  postAttempt(job.id, draft, null, 'Resending your earlier attempt request');
}

function sendAttempt(jobId, body, form) {
  const draft = drafts.prepare(attemptScope(jobId), body, currentSub());
  postAttempt(jobId, draft, form, 'Requesting a new attempt');
}

async function postAttempt(jobId, draft, form, verb) {
  const generation = view.generation;
  const buttons = form ? [...form.querySelectorAll('button')] : [];
  for (const b of buttons) b.disabled = true;
  clear($('action-problem'));
  $('action-status').textContent = `${verb} (Idempotency-Key ${draft.key})…`;
  try {
    const r = await api.call('POST', `/jobs/${encodeURIComponent(jobId)}/attempts`, {
      json: draft.body,
      headers: { 'Idempotency-Key': draft.key },
    });
    if (r.status === 401) {
      unauthenticated(r.problem);
      return;
    }
    if (r.ok && r.body && r.body.id) drafts.settle(attemptScope(jobId), draft.key);
    else if (drafts.settles(r.status)) drafts.settle(attemptScope(jobId), draft.key);
    if (generation !== view.generation) return;
    if (r.ok) {
      if (form) form.reset(); // the form may stay drawn; its reason must not be sent twice
      $('action-status').textContent = `New attempt on ${r.body.provider} ${
        r.headers.get('Idempotent-Replayed') === 'true' ? '(already requested)' : 'started'
      }.`;
      poll(0);
    } else {
      $('action-status').textContent = '';
      show($('action-problem'), r.problem);
    }
  } finally {
    for (const b of buttons) b.disabled = false;
  }
}

async function cancelJob(job, button) {
  const generation = view.generation;
  button.disabled = true;
  clear($('action-problem'));
  $('action-status').textContent = 'Cancelling…';
  const r = await api.call('POST', `/jobs/${encodeURIComponent(job.id)}/cancel`);
  button.disabled = false;
  if (r.status === 401) return unauthenticated(r.problem);
  if (generation !== view.generation) return;
  if (r.ok) {
    $('action-status').textContent = 'Job cancelled.';
    view.seq++; // a read already on its way may carry the state from before the cancel
    renderJob(r.body);
    if (!CLOSED_STATES.has(r.body.state)) keepWatching();
    else clearTimeout(view.timer);
  } else {
    $('action-status').textContent = '';
    show($('action-problem'), r.problem);
  }
}

// --------------------------------------------------------- output, timeline ---

async function loadOutput(job) {
  const marker = `${job.id}|${job.winningAttemptId}`;
  if (view.outputFor === marker) return;
  view.outputFor = marker;
  const generation = view.generation;
  const r = await api.call('GET', `/jobs/${encodeURIComponent(job.id)}/output`);
  if (generation !== view.generation) return;
  $('output').hidden = false;
  if (!r.ok) {
    view.outputFor = null; // read again on the next render
    if (r.status === 401) return unauthenticated(r.problem);
    show($('output-problem'), r.problem);
    return;
  }
  clear($('output-problem'));
  $('output-diff').replaceChildren(...diffLines(typeof r.body === 'string' ? r.body : JSON.stringify(r.body)));
}

/** One span per line, classed by its meaning in a unified diff; the +/- stay in the text. */
function diffLines(text) {
  const lines = text.replace(/\n$/, '').split('\n');
  return lines.map((line) => {
    let kind = 'context';
    if (line.startsWith('+++') || line.startsWith('---') || line.startsWith('diff ') || line.startsWith('index ')) {
      kind = 'meta';
    } else if (line.startsWith('@@')) kind = 'hunk';
    else if (line.startsWith('+')) kind = 'add';
    else if (line.startsWith('-')) kind = 'del';
    return h('span', { class: `line ${kind}`, 'data-kind': kind, text: `${line}\n` });
  });
}

/**
 * GET /jobs/{id}/timeline (a list of { at, kind, attemptId, detail }) may not exist on an older
 * server: a 404 hides the section for this job. Also read: { events | items | entries: [...] }.
 */
async function loadTimeline(job) {
  const generation = view.generation;
  const r = await api.call('GET', `/jobs/${encodeURIComponent(job.id)}/timeline`);
  if (generation !== view.generation) return;
  if (!r.ok) {
    if (r.status === 404 || r.status === 405) {
      view.timelineMissing = true;
      $('timeline').hidden = true;
    }
    return;
  }
  const body = r.body;
  const entries = Array.isArray(body) ? body : (body && (body.events || body.items || body.entries)) || [];
  const attempts = Array.isArray(job.attempts) ? job.attempts : [];
  $('timeline').hidden = entries.length === 0;
  $('timeline-list').replaceChildren(
    ...entries.map((e) => {
      const at = e.at ?? e.time ?? e.timestamp ?? e.createdAt;
      const kind = e.kind ?? e.type ?? e.event ?? '';
      const index = attempts.findIndex((a) => a.id === e.attemptId);
      const attempt = index >= 0 ? `attempt ${index + 1} (${attempts[index].provider})` : '';
      const detail = e.detail ?? e.message ?? e.reason ?? '';
      return h(
        'li',
        { 'data-testid': 'timeline-entry', 'data-kind': kind },
        h('time', { datetime: at || '', title: at || '', text: clock(at) }),
        h('strong', { text: kind || 'event' }),
        attempt ? h('span', { class: 'hint', text: ` ${attempt}` }) : null,
        detail ? h('span', { class: 'timeline-detail', text: ` ${detail}` }) : null,
      );
    }),
  );
}

/** Local time of day with milliseconds: the steps of one attempt are often milliseconds apart. */
function clock(iso) {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime())) return '';
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

// ------------------------------------------------------------------- start ---

function init() {
  $('signin-form').addEventListener('submit', signIn);
  $('sign-out').addEventListener('click', signOut);
  $('submit-form').addEventListener('submit', submitJob);
  $('jobs-refresh').addEventListener('click', () => refreshJobs());
  $('jobs-more').addEventListener('click', () => refreshJobs(true));
  window.addEventListener('hashchange', route);
  operatorConsole.init();
  start();
}

init();
