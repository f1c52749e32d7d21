// The operator console: dead letters, bulk actions by filter, quarantined attempts, the kill switch,
// providers' acceptance, pause, gate and limits, the audit trail, spend per provider per day, and an
// owner's money budgets and share of the workers with the prices calls are charged at.
//
// As in the job view, the server decides what is drawn: GET /me names the console sections it
// serves this caller (none without the operator role), and only those are shown and read. Every
// action is a call to the existing /admin API, which audits it; the page keeps no state about
// what is allowed. Dead letters and attempts link to their job (#/jobs/{id}), which opens in the
// job panel of the same page, so a replayed job can be watched until it completes.
//
// A bulk action (docs/api.md#bulk-actions) never runs on a count the operator has not seen: the dry
// run answers the count, a sample and a token; the confirmation shows them; the run sends the token
// and the server refuses it (409 bulk-set-changed) when the set changed since, and the page then
// offers a new dry run. "Replay all" in the dead letters is the bulk dlq-replay with the empty filter.

import * as api from './api.js';
import { count, h, time, timeElement, usd } from './dom.js';
import { problemElement } from './problems.js';

/** How often the open console reads dead letters, quarantine and the kill switch again (ms). */
const REFRESH_MS = 5000;
/** How often a running acceptance run is read (ms). */
const RUN_POLL_MS = 1000;
/** How often a running bulk action's progress is read (ms). */
const BULK_POLL_MS = 1000;
/** Bulk actions listed as recent (GET /admin/bulk?limit=). */
const BULK_LISTED = 20;
/** The longest reason typed here, as for the kill switch and a resolution (the API takes up to 1000). */
const REASON_MAX = 500;
/** Audit rows drawn at once; the filters narrow the newest 200 records read. */
const AUDIT_ROWS = 25;
const SECTIONS = ['dead_letters', 'quarantine', 'kill_switch', 'providers', 'audit', 'spend', 'budgets'];

const $ = (id) => document.getElementById(id);

const state = {
  generation: 0,
  sections: [],
  timer: 0,
  onUnauthenticated: () => {},
  audit: [],
  selected: new Set(),
  replaying: false,
  deadLetters: 0,
  runs: new Map(),
  /** Where bulk actions are asked for, confirmed and followed (bulkFlow), by prefix: dlq and bulk. */
  flows: {},
  /** The owner whose budgets and share the budgets section shows, once one was asked for. */
  owner: '',
  /** The price in force per provider (GET /admin/prices), to offer its model when a price is set. */
  prices: [],
};

function show(container, problem, extra) {
  container.replaceChildren(problemElement(problem, extra));
}

/** One call; a 401 signs the page out (the token is gone), other problems go to `problemBox`. */
async function call(method, path, options, problemBox) {
  const generation = state.generation;
  const r = await api.call(method, path, options);
  if (generation !== state.generation) return null;
  if (r.status === 401) {
    state.onUnauthenticated(r.problem);
    return null;
  }
  if (!r.ok && problemBox) show(problemBox, r.problem);
  else if (problemBox) problemBox.replaceChildren();
  return r;
}

// ---------------------------------------------------------------- lifecycle ---

/** Draws and reads only the sections the server serves this caller (`console` in GET /me, `me`). */
export function start({ me, onUnauthenticated }) {
  stop();
  state.onUnauthenticated = onUnauthenticated;
  const sections = Array.isArray(me.console) ? me.console : [];
  state.sections = sections.filter((s) => SECTIONS.includes(s));
  for (const name of SECTIONS) $(`console-${name}`).hidden = !state.sections.includes(name);
  $('console').hidden = state.sections.length === 0;
  if (!state.sections.length) return;
  $('console-bulk').hidden = !bulkServed();
  if (bulkServed()) drawBulkForm(me);
  refresh();
  if (has('providers')) readProviders();
  if (has('audit')) readAudit();
  if (has('spend')) readSpend();
  if (has('budgets')) startBudgets(me);
}

export function stop() {
  state.generation++;
  clearTimeout(state.timer);
  state.sections = [];
  state.selected.clear();
  state.runs.clear();
  state.replaying = false;
  state.deadLetters = 0;
  state.owner = '';
  state.prices = [];
  $('budgets-owner-view').hidden = true;
  $('budgets-status').textContent = '';
  for (const flow of Object.values(state.flows)) resetFlow(flow);
  $('console').hidden = true;
  $('console-bulk').hidden = true;
  $('providers-confirm').hidden = true;
  const drawn = ['dlq-body', 'quarantine-body', 'providers-body', 'audit-body', 'spend-chart', 'bulk-recent-body'];
  const budgetsDrawn = ['budgets-body', 'prices-body', 'budgets-problem', 'prices-problem', 'share-set'];
  for (const id of [...drawn, ...budgetsDrawn, 'providers-confirm']) $(id).replaceChildren();
}

function has(section) {
  return state.sections.includes(section);
}

/**
 * GET /me names no section of its own for bulk actions: they are drawn with the dead letters, whose
 * "Replay all" is one of them, and the server serves /admin/bulk to the same operators.
 */
function bulkServed() {
  return has('dead_letters');
}

/** Dead letters, quarantine and the kill switch change under the operator's eyes: read them again. */
async function refresh() {
  clearTimeout(state.timer);
  const generation = state.generation;
  await Promise.all([
    has('dead_letters') ? readDeadLetters() : null,
    has('quarantine') ? readQuarantine() : null,
    has('kill_switch') ? readKillSwitch() : null,
    bulkServed() ? readBulkActions() : null,
  ]);
  if (generation === state.generation) state.timer = setTimeout(refresh, REFRESH_MS);
}

function shortId(id) {
  return id ? String(id).slice(0, 8) : '—';
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

function jobLink(jobId, testid) {
  if (!jobId) return h('span', { text: '—' });
  return h('a', { href: `#/jobs/${jobId}`, 'data-testid': testid, title: jobId, text: shortId(jobId) });
}

// ------------------------------------------------------------- dead letters ---

async function readDeadLetters() {
  const r = await call('GET', '/admin/dlq?limit=100', {}, $('dlq-problem'));
  if (!r || !r.ok) return;
  if (state.replaying) return; // the rows carry the progress of the replay going on
  const items = Array.isArray(r.body.items) ? r.body.items : [];
  const ids = new Set(items.map((d) => d.id));
  for (const id of state.selected) if (!ids.has(id)) state.selected.delete(id);
  $('dlq-depth').textContent = `${r.body.depth} in the queue`;
  state.deadLetters = items.length;
  $('dlq-body').replaceChildren(...items.map(deadLetterRow));
  $('dlq-empty').hidden = items.length > 0;
  updateSelection();
}

function deadLetterRow(d) {
  const box = h('input', {
    type: 'checkbox',
    'data-testid': 'dlq-select',
    'aria-label': `Select dead letter of attempt ${d.attemptId || d.id}`,
    checked: state.selected.has(d.id),
  });
  box.addEventListener('change', () => {
    if (box.checked) state.selected.add(d.id);
    else state.selected.delete(d.id);
    updateSelection();
  });
  return h(
    'tr',
    { 'data-testid': 'dlq-row', 'data-id': d.id, 'data-job-id': d.jobId || '', 'data-attempt-id': d.attemptId || '' },
    h('td', {}, box),
    h('td', {}, jobLink(d.jobId, 'dlq-job')),
    h('td', {}, h('code', { title: d.attemptId || '', text: shortId(d.attemptId) })),
    h('td', { 'data-testid': 'dlq-reason', text: d.reason || '—' }),
    h('td', { 'data-testid': 'dlq-deaths', text: String(d.deathCount) }),
    h('td', {}, timeElement(d.firstDeathAt)),
    h('td', {}, timeElement(d.lastDeathAt)),
    h(
      'td',
      {},
      h('button', {
        type: 'button',
        class: 'secondary small',
        'data-testid': 'dlq-replay-one',
        'aria-label': `Replay the dead letter of attempt ${d.attemptId || d.id}`,
        text: 'Replay',
        disabled: dlqBusy(),
        onclick: () => confirmReplay([d.id]),
      }),
    ),
  );
}

/** A replay of selected letters, or "Replay all" (a bulk action), is asked for or going. */
function dlqBusy() {
  return state.replaying || Boolean(state.flows.dlq && state.flows.dlq.busy);
}

function updateSelection() {
  const n = state.selected.size;
  $('dlq-replay-selected').disabled = n === 0 || dlqBusy();
  $('dlq-replay-selected').textContent = n ? `Replay selected (${n})` : 'Replay selected';
  $('dlq-replay-all').disabled = state.deadLetters === 0 || dlqBusy();
  for (const button of $('dlq-body').querySelectorAll('[data-testid="dlq-replay-one"]')) button.disabled = dlqBusy();
}

/** A replay asks first: it puts work back on the queue for real. */
function confirmReplay(ids) {
  if (dlqBusy() || !ids.length) return;
  const count = ids.length === 1 ? 'this dead letter' : `${ids.length} dead letters`;
  const box = $('dlq-confirm');
  box.hidden = false;
  box.replaceChildren(
    h('p', {
      'data-testid': 'dlq-confirm-text',
      text:
        `Replay ${count}? Each goes back to the work queue (confirmed before it leaves the DLQ); ` +
        'one whose attempt has nothing left to do is skipped. The replay is audited under your name.',
    }),
    h('button', {
      type: 'button',
      class: 'danger',
      'data-testid': 'dlq-confirm-yes',
      text: 'Replay',
      onclick: () => {
        box.hidden = true;
        replay(ids);
      },
    }),
    h('button', {
      type: 'button',
      class: 'secondary',
      'data-testid': 'dlq-confirm-no',
      text: 'Keep them',
      onclick: () => {
        box.hidden = true;
      },
    }),
  );
  box.querySelector('button').focus();
}

/**
 * Selected letters go one request each ({"ids": [id]}), so the bar shows real progress. "Replay all"
 * is not this: it is the bulk dlq-replay (replayAll), counted by a dry run and confirmed first.
 */
async function replay(ids) {
  state.replaying = true;
  updateSelection();
  const progress = $('dlq-progress');
  const status = $('dlq-status');
  progress.hidden = false;
  delete progress.dataset.state;
  delete status.dataset.state;
  $('dlq-refusals').hidden = true;
  let replayed = 0;
  let skipped = 0;
  let problems = 0;
  try {
    progress.max = ids.length;
    for (let i = 0; i < ids.length; i++) {
      progress.value = i;
      status.textContent = `Replaying ${i + 1} of ${ids.length}…`;
      const r = await call('POST', '/admin/dlq/replay', { json: { ids: [ids[i]] } }, $('dlq-problem'));
      if (!r) return;
      if (r.ok) {
        replayed += r.body.replayed;
        skipped += r.body.skipped;
        state.selected.delete(ids[i]);
        const row = $('dlq-body').querySelector(`tr[data-id="${CSS.escape(ids[i])}"]`);
        if (row) row.dataset.replayed = r.body.replayed ? 'replayed' : 'skipped';
      } else problems++;
    }
    progress.value = ids.length;
    status.textContent =
      `Replayed ${replayed}, skipped ${skipped} (nothing left to do)` + (problems ? `, ${problems} refused` : '') + '.';
  } finally {
    state.replaying = false;
    progress.hidden = true;
    updateSelection();
    readDeadLetters();
    if (has('audit')) readAudit();
  }
}

// ------------------------------------------------------------- bulk actions ---

/**
 * The actions of /admin/bulk/{action} in words: what the confirmation asks, what each item becomes,
 * and whether the server requires a reason (BulkAction.reasonRequired).
 */
const BULK = {
  'dlq-replay': {
    verb: 'Replay',
    going: 'Replaying',
    one: 'dead letter',
    many: 'dead letters',
    outcome: 'replayed',
    reasonRequired: false,
    effect: 'Each goes back to the work queue; one whose attempt has nothing left to do is skipped.',
  },
  'dlq-discard': {
    verb: 'Discard',
    going: 'Discarding',
    one: 'dead letter',
    many: 'dead letters',
    outcome: 'discarded',
    reasonRequired: true,
    effect: 'Each is settled discarded and is never replayed.',
  },
  'job-cancel': {
    verb: 'Cancel',
    going: 'Cancelling',
    one: 'job',
    many: 'jobs',
    outcome: 'cancelled',
    reasonRequired: false,
    effect: 'Each job with no result is cancelled; one that gained a result since is refused.',
  },
  'job-retry': {
    verb: 'Retry',
    going: 'Retrying',
    one: 'job',
    many: 'jobs',
    outcome: 'retried',
    reasonRequired: false,
    effect: 'Each gets a new attempt at its provider, which is paid for; the kill switch refuses them while it is off.',
  },
  'quarantine-fail': {
    verb: 'Fail',
    going: 'Failing',
    one: 'quarantined attempt',
    many: 'quarantined attempts',
    outcome: 'failed',
    reasonRequired: true,
    effect: 'Each held attempt is failed, as "fail it" does for one.',
  },
};

/** What each action's filter fields mean (docs/api.md#bulk-actions). */
const FILTER_HINTS = {
  dead_letter:
    "Dead letters: the owner and provider of the letter's job and attempt; reason is the broker's, exact " +
    '(rejected, delivery_limit, …); since (inclusive) and until (exclusive) bound when the letter was stored. ' +
    'Only pending letters are candidates.',
  job:
    "Jobs: the job's owner, provider and state; reason is contained in the job's review reason (any case); " +
    'since (inclusive) and until (exclusive) bound when the job was created.',
  attempt:
    "Quarantined attempts: the job's owner and state, the attempt's provider; reason is contained in the " +
    "attempt's reason (any case); since (inclusive) and until (exclusive) bound when the job was created.",
};
const JOB_STATES = ['accepted', 'running', 'needs_review', 'completed', 'cancelled'];

function kindOf(action) {
  return action.startsWith('dlq-') ? 'dead_letter' : action === 'quarantine-fail' ? 'attempt' : 'job';
}

/** Where a bulk action is asked for, confirmed and followed: the elements `${prefix}-confirm` and so on. */
function bulkFlow(prefix, onSettled) {
  return {
    prefix,
    box: $(`${prefix}-confirm`),
    progress: $(`${prefix}-progress`),
    status: $(`${prefix}-status`),
    refusals: $(`${prefix}-refusals`),
    busy: false,
    onSettled,
  };
}

function resetFlow(flow) {
  flow.busy = false;
  flow.box.hidden = true;
  flow.box.replaceChildren();
  flow.progress.hidden = true;
  flow.refusals.hidden = true;
  flow.refusals.replaceChildren();
}

function setBusy(flow, busy) {
  flow.busy = busy;
  if (flow.prefix === 'dlq') updateSelection();
  else $('bulk-dry-run').disabled = busy;
}

/** A way out of the confirmation box; `text` names what it does. */
function closeButton(flow, text) {
  return h('button', {
    type: 'button',
    class: 'secondary',
    'data-testid': `${flow.prefix}-confirm-no`,
    text,
    onclick: () => {
      flow.box.hidden = true;
      flow.box.replaceChildren();
    },
  });
}

function filterText(filter) {
  const entries = Object.entries(filter || {}).filter(([, v]) => v !== null && v !== undefined && v !== '');
  return entries.length ? entries.map(([k, v]) => `${k} = ${v}`).join(', ') : 'none';
}

/**
 * Asks the server what `action` would act on now (it changes nothing) and draws the count, the
 * sample and the confirmation. `filter` is what the run sends again with the dry run's token.
 */
async function bulkDryRun(flow, action, filter) {
  setBusy(flow, true);
  flow.box.hidden = false;
  flow.box.replaceChildren(h('p', { class: 'hint', text: 'Counting what the filter matches now…' }));
  flow.refusals.hidden = true;
  const r = await call('POST', `/admin/bulk/${encodeURIComponent(action)}/dry-run`, { json: { filter } }, null);
  if (!r) return;
  setBusy(flow, false);
  if (!r.ok) {
    flow.box.replaceChildren(
      problemElement(r.problem, 'Nothing was counted and nothing was done.'),
      closeButton(flow, 'Close'),
    );
    return;
  }
  drawConfirmation(flow, { ...r.body, action, sent: filter });
}

function sampleTable(flow, dry) {
  const sample = Array.isArray(dry.sample) ? dry.sample : [];
  if (!sample.length) return null;
  const p = flow.prefix;
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { class: 'sample', 'data-testid': `${p}-sample` },
      h(
        'caption',
        { text: sample.length < dry.count ? `The first ${sample.length} of ${dry.count}` : `All ${dry.count}` },
      ),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['Id', 'Job', 'Owner', 'Provider', 'State', 'Reason', 'At'].map((t) => h('th', { scope: 'col', text: t })),
        ),
      ),
      h(
        'tbody',
        {},
        ...sample.map((item) =>
          h(
            'tr',
            { 'data-testid': `${p}-sample-item`, 'data-id': item.id, 'data-job-id': item.jobId || '' },
            h('td', {}, h('code', { title: item.id, text: shortId(item.id) })),
            h('td', {}, jobLink(item.jobId, `${p}-sample-job`)),
            h('td', { text: item.owner || '—' }),
            h('td', { text: item.provider || '—' }),
            h('td', { text: item.state || '—' }),
            h('td', { text: item.reason || '—' }),
            h('td', {}, timeElement(item.at)),
          ),
        ),
      ),
    ),
  );
}

/** The dry run's count and sample, and the only way to run it: a confirmation (with a reason). */
function drawConfirmation(flow, dry) {
  const words = BULK[dry.action];
  const p = flow.prefix;
  const count = Number(dry.count) || 0;
  const filter = h('p', { class: 'hint', 'data-testid': `${p}-confirm-filter`, text: `Filter: ${filterText(dry.filter)}.` });
  if (!count) {
    flow.box.replaceChildren(
      h('p', {
        'data-testid': `${p}-confirm-text`,
        'data-count': '0',
        text: `Nothing to ${words.verb.toLowerCase()}: the filter matches no ${words.many} now.`,
      }),
      filter,
      closeButton(flow, 'Close'),
    );
    flow.box.querySelector('button').focus();
    return;
  }
  const reasonId = `${p}-confirm-reason`;
  const reason = h('input', {
    id: reasonId,
    'data-testid': reasonId,
    maxLength: REASON_MAX,
    required: words.reasonRequired,
    autocomplete: 'off',
    placeholder: words.reasonRequired ? 'why (required)' : 'why (optional)',
  });
  reason.addEventListener('input', () => reason.setCustomValidity(''));
  const form = h(
    'form',
    { class: 'inline-form', 'data-testid': `${p}-confirm-form` },
    h('label', { for: reasonId, text: words.reasonRequired ? 'Reason' : 'Reason (optional)' }),
    reason,
    h('button', { type: 'submit', class: 'danger', 'data-testid': `${p}-confirm-yes`, text: `${words.verb} ${count}` }),
    closeButton(flow, 'Cancel'),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const why = reason.value.trim();
    if (words.reasonRequired && !why) {
      reason.setCustomValidity(`Say why: ${words.verb.toLowerCase()} is audited with it.`);
      reason.reportValidity();
      return;
    }
    bulkRun(flow, dry, why);
  });
  flow.box.replaceChildren(
    h('p', {
      'data-testid': `${p}-confirm-text`,
      'data-count': String(count),
      text: `${words.verb} ${plural(count, words.one, words.many)}? ${words.effect} The action is audited under your name.`,
    }),
    filter,
    sampleTable(flow, dry),
    form,
    h('p', {
      class: 'hint',
      text:
        `This count holds until ${time(dry.expiresAt)}. If what the filter matches changes before you confirm, ` +
        'nothing runs and you are asked to dry-run again.',
    }),
  );
  reason.focus();
}

/** Runs what the dry run counted, with its token; a changed set is refused (409) and nothing runs. */
async function bulkRun(flow, dry, reason) {
  setBusy(flow, true);
  flow.box.replaceChildren(h('p', { class: 'hint', text: 'Starting…' }));
  const json = { filter: dry.sent, token: dry.token };
  if (reason) json.reason = reason;
  const r = await call('POST', `/admin/bulk/${encodeURIComponent(dry.action)}/run`, { json }, null);
  if (!r) return;
  if (!r.ok) {
    setBusy(flow, false);
    drawRunRefused(flow, dry, r.problem);
    return;
  }
  flow.box.hidden = true;
  flow.box.replaceChildren();
  readBulkActions();
  // Location is relative (/admin/bulk/{id}); anything else, and the page reads the id it was given.
  const location = r.headers.get('Location') || '';
  const url = location.startsWith('/admin/bulk/') ? location : `/admin/bulk/${encodeURIComponent(r.body.id)}`;
  await followBulk(flow, r.body, url);
}

function drawRunRefused(flow, dry, problem) {
  const p = flow.prefix;
  const changed = problem && problem.code === 'bulk-set-changed';
  // A refusal of the server (4xx) did nothing; without an answer, or with a fault of the server, the
  // action may have started: the recent bulk actions say.
  const status = problem ? problem.status : 0;
  const extra = changed
    ? `Nothing was done: the dry run counted ${dry.count}` +
      (problem.actual !== undefined ? `, the filter matches ${problem.actual} now` : '') +
      '. Run the dry run again and check the new count before you confirm.'
    : status >= 400 && status < 500
      ? 'Nothing was done.'
      : 'It may have started: look for it in the recent bulk actions before you run it again.';
  flow.box.replaceChildren(
    problemElement(problem, extra),
    h('button', {
      type: 'button',
      'data-testid': `${p}-dry-run-again`,
      text: 'Dry run again',
      onclick: () => bulkDryRun(flow, dry.action, dry.sent),
    }),
    ' ',
    closeButton(flow, 'Close'),
  );
  flow.box.querySelector('button').focus();
}

/** Draws the progress, reading it again every second until the action is done. */
async function followBulk(flow, progress, url) {
  const generation = state.generation;
  drawProgress(flow, progress);
  while (progress.state !== 'done') {
    await sleep(BULK_POLL_MS);
    if (generation !== state.generation) return;
    const r = await call('GET', url, {}, null);
    if (!r) return;
    if (!r.ok) {
      flow.box.hidden = false;
      flow.box.replaceChildren(
        problemElement(r.problem, `Bulk action ${progress.id} was started; its progress could not be read.`),
        closeButton(flow, 'Close'),
      );
      break;
    }
    progress = r.body;
    drawProgress(flow, progress);
  }
  setBusy(flow, false);
  flow.onSettled();
}

function drawProgress(flow, p) {
  const words = BULK[p.action] || { going: p.action, outcome: 'done' };
  const bar = flow.progress;
  bar.hidden = false;
  bar.max = Math.max(1, p.total);
  bar.value = p.total ? p.processed : 1;
  bar.dataset.state = p.state;
  bar.dataset.bulkId = p.id;
  bar.setAttribute('aria-label', `Bulk action ${p.id}: ${p.processed} of ${p.total} processed`);
  const counts = `${p.done} ${words.outcome}, ${p.skipped} skipped, ${p.refused} refused`;
  flow.status.dataset.state = p.state;
  flow.status.textContent =
    p.state === 'done'
      ? `Done: ${counts} (bulk action ${p.id}, ${p.total} in all).`
      : `${words.going} ${p.processed} of ${p.total}… (${counts} so far; bulk action ${p.id})`;
  const refusals = Array.isArray(p.refusals) ? p.refusals : [];
  const heading = refusals.length < p.refused ? `The first ${refusals.length} of ${p.refused} refused:` : 'Refused:';
  flow.refusals.hidden = refusals.length === 0;
  flow.refusals.replaceChildren(
    ...(refusals.length ? [h('li', { class: 'hint', text: heading })] : []),
    ...refusals.map((x) =>
      h(
        'li',
        { 'data-testid': `${flow.prefix}-refusal`, 'data-target': x.target },
        h('code', { title: x.target, text: shortId(x.target) }),
        ` ${x.detail}`,
      ),
    ),
  );
}

/** "Replay all" in the dead letters: the bulk dlq-replay with the empty filter, counted first. */
function replayAll() {
  if (dlqBusy()) return;
  bulkDryRun(state.flows.dlq, 'dlq-replay', {});
}

/** The form's action list, the providers GET /me names, and the state choices of the action. */
function drawBulkForm(me) {
  const select = $('bulk-action');
  if (!select.options.length) {
    select.replaceChildren(
      ...Object.entries(BULK).map(([action, words]) =>
        h('option', { value: action, title: action, text: `${words.verb} ${words.many}` }),
      ),
    );
  }
  const providers = Array.isArray(me.providers) ? me.providers : [];
  $('bulk-provider').replaceChildren(
    h('option', { value: '', text: 'any provider' }),
    ...providers.map((p) => h('option', { value: p, text: p })),
  );
  actionChanged();
}

function actionChanged() {
  const action = $('bulk-action').value;
  const kind = kindOf(action);
  const states = kind === 'dead_letter' ? ['pending'] : JOB_STATES;
  const chosen = $('bulk-state').value;
  $('bulk-state').replaceChildren(
    h('option', { value: '', text: kind === 'dead_letter' ? 'pending' : 'any state' }),
    ...(kind === 'dead_letter' ? [] : states.map((s) => h('option', { value: s, text: s }))),
  );
  $('bulk-state').value = states.includes(chosen) && kind !== 'dead_letter' ? chosen : '';
  $('bulk-filter-hint').textContent = FILTER_HINTS[kind];
  formChanged();
}

/** A count shown for other fields than the form's is put away: the operator dry-runs again. */
function formChanged() {
  const flow = state.flows.bulk;
  if (flow && !flow.busy) {
    flow.box.hidden = true;
    flow.box.replaceChildren();
  }
}

/** The form's filter: empty fields left out; datetime-local (the browser's time zone) as instants. */
function bulkFilter() {
  const filter = {};
  for (const [name, id] of [
    ['owner', 'bulk-owner'],
    ['provider', 'bulk-provider'],
    ['state', 'bulk-state'],
    ['reason', 'bulk-reason'],
  ]) {
    const value = $(id).value.trim();
    if (value) filter[name] = value;
  }
  for (const [name, id] of [
    ['since', 'bulk-since'],
    ['until', 'bulk-until'],
  ]) {
    const input = $(id);
    if (!input.value) continue;
    const at = new Date(input.value);
    if (Number.isNaN(at.getTime())) {
      input.setCustomValidity('A date and time, or nothing.');
      input.reportValidity();
      return null;
    }
    filter[name] = at.toISOString();
  }
  return filter;
}

function submitBulk(event) {
  event.preventDefault();
  const filter = bulkFilter();
  if (filter) bulkDryRun(state.flows.bulk, $('bulk-action').value, filter);
}

async function readBulkActions() {
  const r = await call('GET', `/admin/bulk?limit=${BULK_LISTED}`, {}, $('bulk-problem'));
  if (!r || !r.ok) return;
  const items = Array.isArray(r.body) ? r.body : [];
  $('bulk-recent-body').replaceChildren(...items.map(bulkRow));
  $('bulk-recent-empty').hidden = items.length > 0;
}

function bulkRow(b) {
  const words = BULK[b.action] || { outcome: 'done' };
  return h(
    'tr',
    { 'data-testid': 'bulk-recent-row', 'data-id': b.id, 'data-action': b.action, 'data-state': b.state },
    h('td', {}, timeElement(b.createdAt)),
    h('td', {}, h('code', { text: b.action })),
    h('td', { class: 'details', text: filterText(b.filter) }),
    h('td', { text: b.requestedBy }),
    h('td', { text: b.reason || '—' }),
    h(
      'td',
      {},
      h('span', { class: `badge ${b.state === 'done' ? 'state-completed' : 'state-running'}`, text: b.state }),
      ` ${b.processed} of ${b.total}`,
    ),
    h('td', { 'data-testid': 'bulk-recent-counts', text: `${b.done} ${words.outcome}, ${b.skipped} skipped, ${b.refused} refused` }),
  );
}

// --------------------------------------------------------------- quarantine ---

async function readQuarantine() {
  const r = await call('GET', '/admin/quarantine', {}, $('quarantine-problem'));
  if (!r || !r.ok) return;
  const items = Array.isArray(r.body) ? r.body : [];
  const body = $('quarantine-body');
  // Rows are redrawn only when the set of held attempts changes, so a reason being typed survives.
  const key = items.map((a) => a.id).join(',');
  if (body.dataset.key === key) return;
  body.dataset.key = key;
  body.replaceChildren(...items.map(quarantineRow));
  $('quarantine-empty').hidden = items.length > 0;
}

function quarantineRow(a) {
  const reason = h('input', { 'data-testid': 'resolve-reason', required: true, maxLength: 500, placeholder: 'why' });
  const prompt = h('input', { type: 'number', min: 0, 'data-testid': 'resolve-prompt', 'aria-label': 'prompt tokens' });
  const completion = h('input', {
    type: 'number',
    min: 0,
    'data-testid': 'resolve-completion',
    'aria-label': 'completion tokens',
  });
  const fail = h('input', { type: 'checkbox', 'data-testid': 'resolve-fail' });
  const submit = h('button', { type: 'submit', class: 'small', 'data-testid': 'resolve-submit', text: 'Resolve' });
  const form = h(
    'form',
    { class: 'inline-form', 'data-testid': 'resolve-form' },
    h('label', {}, 'Tokens ', prompt, ' / ', completion),
    h('label', {}, fail, ' fail it'),
    h('label', {}, 'Reason ', reason),
    submit,
  );
  fail.addEventListener('change', () => {
    prompt.disabled = completion.disabled = fail.checked;
  });
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const why = reason.value.trim();
    if (!why) {
      reason.setCustomValidity('Say why: the resolution is audited with it.');
      reason.reportValidity();
      return;
    }
    const json = fail.checked
      ? { fail: true, reason: why }
      : { usage: { promptTokens: Number(prompt.value), completionTokens: Number(completion.value) }, reason: why };
    submit.disabled = true;
    const r = await call('POST', `/admin/attempts/${encodeURIComponent(a.id)}/resolve`, { json }, $('quarantine-problem'));
    submit.disabled = false;
    if (r && r.ok) {
      $('quarantine-status').textContent = `Attempt ${shortId(a.id)} resolved: ${r.body.state}.`;
      readQuarantine();
      if (has('audit')) readAudit();
    }
  });
  reason.addEventListener('input', () => reason.setCustomValidity(''));
  return h(
    'tr',
    { 'data-testid': 'quarantine-row', 'data-attempt-id': a.id },
    h('td', {}, jobLink(a.jobId, 'quarantine-job')),
    h('td', {}, h('code', { title: a.id, text: shortId(a.id) })),
    h('td', { text: a.provider }),
    h('td', { text: a.reason || '—' }),
    h('td', {}, timeElement(a.updatedAt)),
    h('td', {}, form),
  );
}

// -------------------------------------------------------------- kill switch ---

async function readKillSwitch() {
  const r = await call('GET', '/admin/fallback', {}, $('killswitch-problem'));
  if (r && r.ok) renderKillSwitch(r.body);
}

function renderKillSwitch(s) {
  const badge = $('killswitch-state');
  badge.textContent = s.enabled ? 'fallback on' : 'fallback off';
  badge.className = `badge ${s.enabled ? 'state-completed' : 'state-needs_review'}`;
  badge.dataset.enabled = String(s.enabled);
  $('killswitch-reason').textContent = s.reason || '—';
  $('killswitch-by').textContent = s.setBy || '—';
  $('killswitch-at').replaceChildren(timeElement(s.setAt));
  const button = $('killswitch-flip');
  button.textContent = s.enabled ? 'Turn fallback off' : 'Turn fallback on';
  button.className = s.enabled ? 'danger' : '';
  button.dataset.target = String(!s.enabled);
  $('killswitch-reason-input').required = s.enabled;
}

async function flipKillSwitch(event) {
  event.preventDefault();
  const enabled = $('killswitch-flip').dataset.target === 'true';
  const input = $('killswitch-reason-input');
  const reason = input.value.trim();
  if (!enabled && !reason) {
    input.setCustomValidity('Say why new fallback attempts are refused.');
    input.reportValidity();
    return;
  }
  $('killswitch-flip').disabled = true;
  const r = await call('PUT', '/admin/fallback', { json: reason ? { enabled, reason } : { enabled } }, $('killswitch-problem'));
  $('killswitch-flip').disabled = false;
  if (r && r.ok) {
    input.value = '';
    renderKillSwitch(r.body);
    if (has('audit')) readAudit();
  }
}

// ---------------------------------------------------------------- providers ---

async function readProviders() {
  const r = await call('GET', '/admin/providers', {}, $('providers-problem'));
  if (!r || !r.ok) return;
  const items = Array.isArray(r.body) ? r.body : [];
  $('providers-body').replaceChildren(...items.map(providerRow));
}

function results(run) {
  const list = run && Array.isArray(run.results) ? run.results : [];
  if (!list.length) return h('span', { class: 'hint', text: run ? 'no task finished yet' : 'never run' });
  return h(
    'ul',
    { class: 'task-results', 'data-testid': 'provider-results' },
    ...list.map((t) =>
      h(
        'li',
        { 'data-passed': String(Boolean(t.passed)) },
        h('span', { class: `badge ${t.passed ? 'state-completed' : 'state-failed'}`, text: t.passed ? 'pass' : 'fail' }),
        ` ${t.task}`,
        t.reason ? h('span', { class: 'hint', text: ` ${t.reason}` }) : null,
      ),
    ),
  );
}

/** What holds a provider's calls now (docs/design.md, rule 21): its announced rate limit or its breaker. */
function gateText(health) {
  if (health.limitedUntil) {
    return `rate limited until ${new Date(health.limitedUntil).toLocaleTimeString()}`;
  }
  if (health.breaker === 'half_open') {
    return `breaker half open, probes: ${health.probeCalls} counted (${health.probeFaults} faults), `
      + `${health.probesUnderWay} under way`;
  }
  const next = health.retryAt ? `, probes at ${new Date(health.retryAt).toLocaleTimeString()}` : '';
  return `breaker ${health.breaker}${next}`;
}

/**
 * A provider's calls in flight and its load against the limits it has (GET /admin/providers `limits`,
 * `usage`; a null limit is none): "3/8 in flight · 41/60 rpm · 9k/100k tpm", or "0 in flight" for a
 * provider with no limit. Null when the answer carries neither, so nothing is drawn.
 */
function limitsText(limits, usage) {
  if (!limits && !usage) return null;
  const l = limits || {};
  const u = usage || {};
  const parts = [
    figure(u.inFlight, l.maxInFlight, ' in flight', String, true),
    figure(u.requestsThisMinute, l.requestsPerMinute, ' rpm', String, false),
    figure(u.tokensThisMinute, l.tokensPerMinute, ' tpm', count, false),
  ].filter(Boolean);
  return parts.length ? parts.join(' · ') : null;
}

/** "used/limit unit"; without a limit "used unit" when `always`, else null (nothing to measure against). */
function figure(used, limit, unit, format, always) {
  const known = (v) => v !== null && v !== undefined;
  if (known(used) && known(limit)) return `${format(used)}/${format(limit)}${unit}`;
  if (known(limit)) return `at most ${format(limit)}${unit}`;
  if (known(used) && always) return `${format(used)}${unit}`;
  return null;
}

function providerRow(p) {
  const run = state.runs.get(p.name) || p.latestRun;
  const going = run && (run.state === 'requested' || run.state === 'running');
  const button = h('button', {
    type: 'button',
    class: 'secondary small',
    'data-testid': 'provider-accept',
    text: going ? 'Running…' : 'Run acceptance',
    disabled: going,
    onclick: () => requestAcceptance(p.name, button),
  });
  const progress = going
    ? h('progress', { 'data-testid': 'provider-progress', max: run.tasksTotal || 1, value: run.tasksDone || 0 })
    : null;
  return h(
    'tr',
    {
      'data-testid': 'provider-row',
      'data-provider': p.name,
      'data-accepted': String(p.accepted),
      'data-paused': String(Boolean(p.paused)),
    },
    h('th', { scope: 'row' }, p.name, limitsLine(p)),
    h('td', { 'data-testid': 'provider-pause-state' }, ...pauseCell(p)),
    h(
      'td',
      { 'data-testid': 'provider-status' },
      h('span', { class: `badge ${p.accepted ? 'state-completed' : 'state-needs_review'}`, text: p.accepted ? 'earned' : 'not earned' }),
      p.refusal ? h('span', { class: 'hint block', text: p.refusal }) : null,
      p.health && !p.health.open
        ? h('span', {
            class: 'badge state-needs_review block',
            'data-testid': 'provider-gate',
            title: p.health.limitReason || p.health.lastFault || '',
            text: gateText(p.health),
          })
        : null,
    ),
    h(
      'td',
      { 'data-testid': 'provider-run' },
      run
        ? h('span', {
            'data-state': run.state,
            'data-run-id': run.id,
            text: `${run.state}, ${run.tasksPassed}/${run.tasksTotal} passed, by ${run.requestedBy}`,
          })
        : h('span', { class: 'hint', text: '—' }),
      run ? h('span', { class: 'block' }, timeElement(run.finishedAt || run.requestedAt)) : null,
      progress,
    ),
    h('td', {}, results(run)),
    h('td', {}, button),
  );
}

function limitsLine(p) {
  const text = limitsText(p.limits, p.usage);
  if (!text) return null;
  return h('span', {
    class: 'hint block',
    'data-testid': 'provider-limits',
    title: 'Now, against its limits: calls in flight, requests (rpm) and tokens (tpm) in the current minute',
    text,
  });
}

/** "Paused by X at T: reason" and Resume, or Pause (rule 19: the provider's attempts are held meanwhile). */
function pauseCell(p) {
  if (!p.paused) {
    return [
      h('span', { class: 'hint block', text: 'not paused' }),
      h('button', {
        type: 'button',
        class: 'secondary small',
        'data-testid': 'provider-pause',
        'aria-label': `Pause ${p.name}`,
        text: 'Pause',
        onclick: () => confirmPause(p.name, true),
      }),
    ];
  }
  return [
    h('span', { class: 'badge state-needs_review', text: 'paused' }),
    h(
      'span',
      { class: 'block', 'data-testid': 'provider-paused' },
      `Paused by ${p.paused.pausedBy} at `,
      timeElement(p.paused.pausedAt),
      `: ${p.paused.reason}`,
    ),
    h('button', {
      type: 'button',
      class: 'secondary small',
      'data-testid': 'provider-resume',
      'aria-label': `Resume ${p.name}`,
      text: 'Resume',
      onclick: () => confirmPause(p.name, false),
    }),
  ];
}

/** A pause or a resume asks first, with a required reason (the API requires it; both are audited). */
function confirmPause(name, pausing) {
  const box = $('providers-confirm');
  const reason = h('input', {
    id: 'providers-confirm-reason',
    'data-testid': 'provider-pause-reason',
    required: true,
    maxLength: REASON_MAX,
    autocomplete: 'off',
    placeholder: 'why (required)',
  });
  reason.addEventListener('input', () => reason.setCustomValidity(''));
  const submit = h('button', {
    type: 'submit',
    class: pausing ? 'danger' : '',
    'data-testid': 'provider-pause-yes',
    text: pausing ? `Pause ${name}` : `Resume ${name}`,
  });
  const form = h(
    'form',
    { class: 'inline-form' },
    h('label', { for: 'providers-confirm-reason', text: 'Reason' }),
    reason,
    submit,
    h('button', {
      type: 'button',
      class: 'secondary',
      'data-testid': 'provider-pause-no',
      text: 'Cancel',
      onclick: () => {
        box.hidden = true;
      },
    }),
  );
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const why = reason.value.trim();
    if (!why) {
      reason.setCustomValidity(`Say why: the ${pausing ? 'pause' : 'resume'} is audited with it.`);
      reason.reportValidity();
      return;
    }
    submit.disabled = true;
    const verb = pausing ? 'pause' : 'resume';
    const r = await call('POST', `/admin/providers/${encodeURIComponent(name)}/${verb}`, { json: { reason: why } }, $('providers-problem'));
    submit.disabled = false;
    if (!r || !r.ok) return;
    box.hidden = true;
    const status = $('providers-status');
    status.dataset.reannounced = String(r.body.reannounced);
    status.textContent = pausing
      ? `${name} is paused by ${r.body.pause ? r.body.pause.pausedBy : 'an operator'}: its attempts are held until it is resumed.`
      : `${name} resumed: ${plural(r.body.reannounced, 'held attempt', 'held attempts')} announced again.`;
    readProviders();
    if (has('audit')) readAudit();
  });
  box.hidden = false;
  box.replaceChildren(
    h('p', {
      'data-testid': 'provider-pause-text',
      text: pausing
        ? `Pause ${name}? Its attempts are held (not called, not failed, not dead-lettered) until it is resumed; ` +
          'jobs may still name it and wait.'
        : `Resume ${name}? Its held attempts are announced again and go on where they were.`,
    }),
    form,
  );
  reason.focus();
}

async function requestAcceptance(name, button) {
  button.disabled = true;
  const r = await call('POST', `/admin/providers/${encodeURIComponent(name)}/acceptance`, {}, $('providers-problem'));
  if (!r) return;
  if (!r.ok) {
    button.disabled = false;
    return;
  }
  followRun(name, r.body);
  if (has('audit')) readAudit();
}

/** Reads the run until it finishes, redrawing the providers' table with its progress. */
async function followRun(name, run) {
  const generation = state.generation;
  state.runs.set(name, run);
  await readProviders();
  while (generation === state.generation && !(run.state === 'passed' || run.state === 'failed')) {
    await new Promise((resolve) => setTimeout(resolve, RUN_POLL_MS));
    const r = await call('GET', `/admin/providers/${encodeURIComponent(name)}/acceptance/${run.id}`, {}, $('providers-problem'));
    if (!r || !r.ok) return;
    run = r.body;
    state.runs.set(name, run);
    await readProviders();
  }
  state.runs.delete(name);
  if (generation === state.generation) readProviders();
}

// -------------------------------------------------------------------- audit ---

async function readAudit() {
  const r = await call('GET', '/admin/audit?limit=200', {}, $('audit-problem'));
  if (!r || !r.ok) return;
  state.audit = Array.isArray(r.body) ? r.body : [];
  const select = $('audit-action');
  const chosen = select.value;
  const actions = [...new Set(state.audit.map((e) => e.action))].sort();
  select.replaceChildren(h('option', { value: '', text: 'every action' }), ...actions.map((a) => h('option', { value: a, text: a })));
  select.value = actions.includes(chosen) ? chosen : '';
  renderAudit();
}

/** Filters the newest 200 records in the page: by action, and by text in actor, reason, ids or details. */
function renderAudit() {
  const action = $('audit-action').value;
  const text = $('audit-filter').value.trim().toLowerCase();
  const shown = state.audit.filter((e) => {
    if (action && e.action !== action) return false;
    if (!text) return true;
    return [e.actor, e.action, e.reason, e.jobId, e.attemptId, e.details].some((v) => v && String(v).toLowerCase().includes(text));
  });
  $('audit-body').replaceChildren(
    ...shown.slice(0, AUDIT_ROWS).map((e) =>
      h(
        'tr',
        { 'data-testid': 'audit-row', 'data-action': e.action },
        h('td', {}, timeElement(e.at)),
        h('td', { 'data-testid': 'audit-actor', text: e.actor }),
        h('td', {}, h('code', { text: e.action })),
        h('td', { 'data-testid': 'audit-reason', text: e.reason || '—' }),
        h('td', {}, jobLink(e.jobId, 'audit-job')),
        h('td', { class: 'details', text: e.details || '' }),
      ),
    ),
  );
  $('audit-count').textContent =
    `${shown.length} of ${state.audit.length}` + (shown.length > AUDIT_ROWS ? `, the newest ${AUDIT_ROWS} shown` : '');
}

// -------------------------------------------------------------------- spend ---

async function readSpend() {
  const r = await call('GET', '/admin/spend', {}, $('spend-problem'));
  if (!r || !r.ok) return;
  drawSpend(r.body);
}

const SVG = 'http://www.w3.org/2000/svg';
// The same colours as .swatch-N in style.css (an inline style would break the CSP).
const PALETTE = ['#2563eb', '#d97706', '#059669', '#db2777', '#7c3aed', '#0891b2'];

function svg(tag, attrs = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** One group of bars per day (oldest left), one bar per provider: prompt + completion tokens. */
function drawSpend(spend) {
  const rows = Array.isArray(spend.days) ? spend.days : [];
  const days = [];
  for (let d = new Date(`${spend.from}T00:00:00Z`); d <= new Date(`${spend.to}T00:00:00Z`); d.setUTCDate(d.getUTCDate() + 1)) {
    days.push(d.toISOString().slice(0, 10));
  }
  const providers = [...new Set(rows.map((r) => r.provider))].sort();
  const total = (r) => r.promptTokens + r.completionTokens;
  const max = Math.max(1, ...rows.map(total));
  const width = 640;
  const height = 180;
  const left = 48;
  const bottom = 24;
  const slot = (width - left) / Math.max(1, days.length);
  const bar = Math.max(2, (slot - 4) / Math.max(1, providers.length));
  const chart = svg('svg', {
    viewBox: `0 0 ${width} ${height + bottom}`,
    role: 'img',
    'aria-label': `Tokens spent per provider per day, ${spend.from} to ${spend.to}`,
    'data-testid': 'spend-svg',
  });
  chart.append(svg('line', { x1: left, y1: height, x2: width, y2: height, stroke: '#9ca3af' }));
  chart.append(svg('text', { x: left - 6, y: 12, 'text-anchor': 'end', 'font-size': 10 }, String(max)));
  chart.append(svg('text', { x: left - 6, y: height, 'text-anchor': 'end', 'font-size': 10 }, '0'));
  days.forEach((day, i) => {
    const x0 = left + i * slot + 2;
    if (days.length <= 16 || i % 2 === 0) {
      chart.append(svg('text', { x: x0 + slot / 2 - 2, y: height + 14, 'text-anchor': 'middle', 'font-size': 9 }, day.slice(5)));
    }
    providers.forEach((provider, j) => {
      const row = rows.find((r) => r.day === day && r.provider === provider);
      if (!row) return;
      const tall = Math.max(1, (total(row) / max) * (height - 16));
      const rect = svg('rect', {
        x: x0 + j * bar,
        y: height - tall,
        width: bar - 1,
        height: tall,
        fill: PALETTE[j % PALETTE.length],
        'data-testid': 'spend-bar',
        'data-day': day,
        'data-provider': provider,
        'data-tokens': total(row),
      });
      rect.append(
        svg('title', {}, `${day} ${provider}: ${row.promptTokens} prompt + ${row.completionTokens} completion tokens, ` +
          `${row.attempts} attempts (${row.unknownAttempts} without reported usage)`),
      );
      chart.append(rect);
    });
  });
  const legend = h(
    'p',
    { class: 'legend' },
    ...providers.map((p, j) =>
      h('span', { class: 'legend-item' }, h('span', { class: `swatch swatch-${j % PALETTE.length}` }), ` ${p}`),
    ),
  );
  $('spend-chart').replaceChildren(chart, rows.length ? legend : h('p', { class: 'hint', text: 'Nothing spent in these days.' }));
}

// ------------------------------------------------------------------ budgets ---

/** The prices are read at once; an owner's budgets and share once the operator names the owner. */
function startBudgets(me) {
  const providers = Array.isArray(me.providers) ? me.providers : [];
  $('price-provider').replaceChildren(...providers.map((p) => h('option', { value: p, text: p })));
  readPrices();
}

function showOwner(event) {
  event.preventDefault();
  const owner = $('budgets-owner').value.trim();
  if (!owner) return;
  state.owner = owner;
  $('budgets-status').textContent = '';
  readOwner();
}

/** GET /admin/budgets/{owner} and GET /admin/owners/{owner}/share, drawn together. */
async function readOwner() {
  const owner = state.owner;
  if (!owner) return;
  const path = encodeURIComponent(owner);
  const problem = $('budgets-problem');
  const [budgets, share] = await Promise.all([
    call('GET', `/admin/budgets/${path}`, {}, null),
    call('GET', `/admin/owners/${path}/share`, {}, null),
  ]);
  if (!budgets || !share || owner !== state.owner) return;
  const failed = [budgets, share].find((r) => !r.ok);
  if (failed) {
    show(problem, failed.problem);
    return;
  }
  problem.replaceChildren();
  $('budgets-owner-view').hidden = false;
  $('budgets-owner-name').textContent = owner;
  const list = Array.isArray(budgets.body.budgets) ? budgets.body.budgets : [];
  $('budgets-body').replaceChildren(...list.map(budgetRow));
  $('budgets-empty').hidden = list.length > 0;
  drawShare(share.body);
}

function budgetRow(b) {
  const periodText = `${b.period}${b.periodStartsOn ? ` from ${b.periodStartsOn}` : ''}`;
  return h(
    'tr',
    {
      'data-testid': 'budget-row',
      'data-period': b.period,
      'data-provider': b.provider || '',
      'data-past-soft': String(Boolean(b.pastSoftThreshold)),
    },
    h('th', { scope: 'row', 'data-testid': 'budget-period', text: periodText }),
    h('td', { 'data-testid': 'budget-provider', text: b.provider ? b.provider : 'all providers' }),
    money(b.limitUsd, 'budget-limit'),
    money(b.spentUsd, 'budget-spent'),
    money(b.reservedUsd, 'budget-reserved'),
    money(b.remainingUsd, 'budget-remaining'),
    h('td', {}, budgetBar(b)),
    h(
      'td',
      { 'data-testid': 'budget-soft' },
      `${b.softPercent}%`,
      b.pastSoftThreshold ? h('span', { class: 'badge state-needs_review block', text: 'past it' }) : null,
    ),
    h('td', { 'data-testid': 'budget-origin', text: b.defaultBudget ? "the deployment's default" : 'set for this owner' }),
  );
}

function money(amount, testid) {
  return h('td', { class: 'money', 'data-testid': testid, 'data-usd': amount ?? '', text: amount == null ? '—' : usd(amount) });
}

/**
 * One bar per budget: the spent part, then the reserved part, on the limit's width, with a mark at
 * the soft threshold. SVG attributes rather than a style attribute, which the CSP refuses.
 */
function budgetBar(b) {
  const limit = Number(b.limitUsd);
  const spent = Number(b.spentUsd) || 0;
  const reserved = Number(b.reservedUsd) || 0;
  const width = 160;
  const scale = (v) => (limit > 0 ? Math.min(width, (v / limit) * width) : v > 0 ? width : 0);
  const spentWidth = scale(spent);
  const reservedWidth = Math.min(width - spentWidth, scale(reserved));
  const percent = limit > 0 ? Math.round(((spent + reserved) / limit) * 100) : spent + reserved > 0 ? 100 : 0;
  const bar = svg('svg', {
    viewBox: `0 0 ${width} 14`,
    class: 'budget-bar',
    role: 'img',
    'aria-label': `${percent}% of ${usd(b.limitUsd)} used: ${usd(spent)} spent, ${usd(reserved)} reserved; soft threshold at ${b.softPercent}%`,
    'data-testid': 'budget-bar',
    'data-percent': percent,
  });
  bar.append(svg('rect', { class: 'budget-room', x: 0, y: 0, width, height: 14 }));
  if (spentWidth > 0) bar.append(svg('rect', { class: 'budget-spent', x: 0, y: 0, width: spentWidth, height: 14 }));
  if (reservedWidth > 0) {
    bar.append(svg('rect', { class: 'budget-reserved', x: spentWidth, y: 0, width: reservedWidth, height: 14 }));
  }
  const soft = (Math.min(100, Math.max(0, b.softPercent)) / 100) * width;
  bar.append(svg('line', { class: 'budget-soft', x1: soft, y1: 0, x2: soft, y2: 14 }));
  return bar;
}

function drawShare(share) {
  $('share-weight').textContent = `${share.weight} (jobs per relay turn)`;
  $('share-max').textContent = share.maxInFlight == null ? "the workers' default" : String(share.maxInFlight);
  $('share-set').replaceChildren(
    ...(share.setBy
      ? [`by ${share.setBy} at `, timeElement(share.updatedAt), share.reason ? `: ${share.reason}` : '']
      : ['never set for this owner (weight 1, no cap of its own)']),
  );
  $('share-weight-input').value = String(share.weight);
  $('share-max-input').value = share.maxInFlight == null ? '' : String(share.maxInFlight);
}

async function readPrices() {
  const r = await call('GET', '/admin/prices', {}, $('prices-problem'));
  if (!r || !r.ok) return;
  state.prices = Array.isArray(r.body) ? r.body : [];
  $('prices-body').replaceChildren(
    ...state.prices.map((p) =>
      h(
        'tr',
        { 'data-testid': 'price-row', 'data-provider': p.provider, 'data-model': p.model },
        h('th', { scope: 'row', text: p.provider }),
        h('td', {}, h('code', { text: p.model })),
        money(p.inputUsdPerMillionTokens, 'price-input-usd'),
        money(p.outputUsdPerMillionTokens, 'price-output-usd'),
        h('td', {}, timeElement(p.effectiveFrom)),
        h('td', { text: p.setBy || '—' }),
        h('td', { text: p.reason || '—' }),
      ),
    ),
  );
  $('prices-empty').hidden = state.prices.length > 0;
  offerModel();
}

/** The price form offers the model the chosen provider is priced for now, if any. */
function offerModel() {
  const provider = $('price-provider').value;
  const current = state.prices.find((p) => p.provider === provider);
  if (current && !$('price-model').value) $('price-model').value = current.model;
}

/** A reason is required by every write here: the API audits it. */
function reasonOf(input, what) {
  const why = input.value.trim();
  if (!why) {
    input.setCustomValidity(`Say why: the ${what} is audited with it.`);
    input.reportValidity();
  }
  return why;
}

/** One audited PUT from a form of this section; on success the form is reset and `after` runs. */
async function put(form, path, json, problemBox, after) {
  const button = form.querySelector('button[type="submit"]');
  button.disabled = true;
  const r = await call('PUT', path, { json }, problemBox);
  button.disabled = false;
  if (!r || !r.ok) return null;
  after(r.body);
  if (has('audit')) readAudit();
  return r.body;
}

async function setBudget(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const reason = reasonOf($('budget-reason'), 'budget');
  if (!reason || !state.owner) return;
  const period = $('budget-period').value;
  const json = { limitUsd: Number($('budget-limit').value), softPercent: Number($('budget-soft').value), reason };
  await put(form, `/admin/budgets/${encodeURIComponent(state.owner)}/${period}`, json, $('budgets-problem'), (b) => {
    $('budget-reason').value = '';
    $('budgets-status').textContent = `The ${b.period} budget of ${state.owner} is ${usd(b.limitUsd)} from the next claim on.`;
    readOwner();
  });
}

async function setShare(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const reason = reasonOf($('share-reason'), 'share');
  if (!reason || !state.owner) return;
  const max = $('share-max-input').value.trim();
  const json = { weight: Number($('share-weight-input').value), ...(max ? { maxInFlight: Number(max) } : {}), reason };
  await put(form, `/admin/owners/${encodeURIComponent(state.owner)}/share`, json, $('budgets-problem'), (share) => {
    $('share-reason').value = '';
    $('budgets-status').textContent = `The share of ${state.owner} is weight ${share.weight} from the next relay round on.`;
    drawShare(share);
  });
}

async function setPrice(event) {
  event.preventDefault();
  const form = event.currentTarget;
  const reason = reasonOf($('price-reason'), 'price');
  if (!reason) return;
  const provider = $('price-provider').value;
  const json = {
    model: $('price-model').value.trim(),
    inputUsdPerMillionTokens: Number($('price-input').value),
    outputUsdPerMillionTokens: Number($('price-output').value),
    reason,
  };
  await put(form, `/admin/prices/${encodeURIComponent(provider)}`, json, $('prices-problem'), (p) => {
    form.reset();
    $('price-provider').value = provider;
    $('budgets-status').textContent = `${p.provider} (${p.model}) is charged at the new price from the next claim on.`;
    readPrices();
  });
}

// -------------------------------------------------------------------- wiring ---

export function init() {
  state.flows.dlq = bulkFlow('dlq', () => {
    readDeadLetters();
    readBulkActions();
    if (has('audit')) readAudit();
  });
  state.flows.bulk = bulkFlow('bulk', () => {
    refresh();
    if (has('audit')) readAudit();
  });
  $('dlq-replay-selected').addEventListener('click', () => confirmReplay([...state.selected]));
  $('dlq-replay-all').addEventListener('click', replayAll);
  $('bulk-form').addEventListener('submit', submitBulk);
  $('bulk-form').addEventListener('input', formChanged);
  $('bulk-action').addEventListener('change', actionChanged);
  for (const id of ['bulk-since', 'bulk-until']) $(id).addEventListener('input', (e) => e.target.setCustomValidity(''));
  $('bulk-refresh').addEventListener('click', () => readBulkActions());
  $('dlq-refresh').addEventListener('click', () => refresh());
  $('killswitch-form').addEventListener('submit', flipKillSwitch);
  $('killswitch-reason-input').addEventListener('input', (e) => e.target.setCustomValidity(''));
  $('audit-filter').addEventListener('input', renderAudit);
  $('audit-action').addEventListener('change', renderAudit);
  $('audit-refresh').addEventListener('click', () => readAudit());
  $('spend-refresh').addEventListener('click', () => readSpend());
  $('providers-refresh').addEventListener('click', () => readProviders());
  $('budgets-owner-form').addEventListener('submit', showOwner);
  $('budgets-refresh').addEventListener('click', () => {
    readPrices();
    readOwner();
  });
  $('budget-form').addEventListener('submit', setBudget);
  $('share-form').addEventListener('submit', setShare);
  $('price-form').addEventListener('submit', setPrice);
  $('price-provider').addEventListener('change', () => {
    $('price-model').value = '';
    offerModel();
  });
  for (const id of ['budget-reason', 'share-reason', 'price-reason']) {
    $(id).addEventListener('input', (e) => e.target.setCustomValidity(''));
  }
}
