// The operator console: drawn only for the sections GET /me names (operators), every action through
// the /admin API and audited. A dead letter is made the way the broker makes one (tools/DeadLetter.java)
// for a job whose attempt no worker has seen, so replaying it from the console is what completes the
// job, which the operator watches in the job panel of the same page. Bulk actions by filter (the dead
// letters' "Replay all" among them) run only after a dry run's count was shown and confirmed, and are
// followed to done; a provider is paused and resumed with a reason. Writes
// docs/screenshots/operator-console.png.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import {
  API,
  REPO_ROOT,
  FAKE,
  apiGet,
  apiSend,
  assertNoPageErrors,
  browserForThisFile,
  eventually,
  newPage,
  recordPosts,
  scriptProvider,
  signIn,
  token,
  unique,
  waitForJobState,
} from './support.mjs';

const AMQP = process.env.JOBAPI_AMQP_URL || 'amqp://jobapi:jobapi@127.0.0.1:5672/jobapi';
const PG = {
  host: process.env.PGHOST || '127.0.0.1',
  port: process.env.PGPORT || '5432',
  user: process.env.PGUSER || 'jobapi',
  password: process.env.PGPASSWORD || 'jobapi',
  database: process.env.PGDATABASE || 'jobapi',
};
const ADMIN_READS = [
  '/admin/dlq',
  '/admin/quarantine',
  '/admin/fallback',
  '/admin/providers',
  '/admin/audit',
  '/admin/spend',
  '/admin/bulk',
  '/admin/budgets/someone',
  '/admin/owners/someone/share',
  '/admin/prices',
];

const browser = browserForThisFile();

function m2(...parts) {
  const jar = path.join(os.homedir(), '.m2', 'repository', ...parts);
  assert.ok(existsSync(jar), `${jar} is missing: build the project once (./mvnw -o package)`);
  return jar;
}

function sql(statement) {
  return execFileSync(
    'psql',
    ['-X', '-q', '-tA', '-v', 'ON_ERROR_STOP=1', '-h', PG.host, '-p', PG.port, '-U', PG.user, '-d', PG.database, '-c', statement],
    { env: { ...process.env, PGPASSWORD: PG.password }, encoding: 'utf8' },
  ).trim();
}

/** The API called directly with a JSON body: `{status, body}`. */
async function apiPost(pathname, json, bearer) {
  const response = await fetch(API + pathname, {
    method: 'POST',
    headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(json),
  });
  return { status: response.status, body: await response.json() };
}

/** Waits until the API has stored `n` pending dead letters of `owner` (its mover takes them off the broker). */
async function waitForPending(owner, bearer, n) {
  const query = `/admin/dlq/count?owner=${encodeURIComponent(owner)}`;
  await eventually(async () => (await apiGet(query, bearer)).count === n, `${n} pending dead letters of ${owner}`);
}

/** The page's next dry run of `action`, answered. */
function nextDryRun(page, action) {
  return page.waitForResponse(
    (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === `/admin/bulk/${action}/dry-run`,
  );
}

/**
 * The unannounced attempts below stay unannounced only while fake-a's gate holds none of its calls:
 * a resume, or a breaker turning half-open, announces every waiting attempt of the provider, these
 * included, and the worker completes them before their dead letters are replayed. The stack is shared
 * with whatever ran before (a scripted outage, an interrupted pause test), so the file starts by
 * ending any outage and pause of fake-a and, while its breaker is not closed, by sending it jobs of
 * its own: held, then probed once the breaker's wait is over, and answered, which closes it.
 */
async function fakeAGateClosed() {
  const bearer = token(unique('web-gate'), 'operator');
  const fakeA = async () => (await apiGet('/admin/providers', bearer)).find((p) => p.name === 'fake-a');
  const ended = await fetch(`${FAKE}/fake/outage`, { method: 'DELETE' });
  assert.ok(ended.ok, `DELETE /fake/outage answered ${ended.status}`);
  if ((await fakeA()).paused) {
    const resumed = await apiSend('POST', '/admin/providers/fake-a/resume', { reason: 'web tests start unpaused' }, bearer);
    assert.equal(resumed.status, 200, JSON.stringify(resumed.body));
  }
  // Half open, the breaker closes only after several answered probes: a job every two seconds gives it them.
  const deadline = Date.now() + 180_000;
  while ((await fakeA()).health.breaker !== 'closed') {
    assert.ok(Date.now() < deadline, `fake-a's breaker still not closed: ${JSON.stringify((await fakeA()).health)}`);
    const probe = await fetch(`${API}/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json', 'Idempotency-Key': unique('probe') },
      body: JSON.stringify({
        input: { prompt: `close fake-a's breaker (${unique('probe')})`, repository: 'demo', baseRef: 'main' },
        provider: 'fake-a',
      }),
    });
    assert.equal(probe.status, 201, await probe.text());
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

before(fakeAGateClosed, { timeout: 200_000 });

/**
 * A job whose first attempt is `starting` and was never announced (no outbox row), as the API
 * would have written it: no worker knows of it (until the sweep announces it again after a minute).
 */
function unannouncedJob(owner, prompt) {
  const jobId = randomUUID();
  const attemptId = randomUUID();
  const input = JSON.stringify({ baseRef: 'main', prompt, repository: 'demo' });
  const quote = (s) => `'${s.replace(/'/g, "''")}'`;
  sql(
    'BEGIN;' +
      ' INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider, state, created_at, updated_at)' +
      ` VALUES ('${jobId}', ${quote(owner)}, ${quote(unique('dlq-key'))}, encode(sha256(convert_to(${quote(input)}, 'UTF8')), 'hex'),` +
      ` ${quote(input)}, 'fake-a', 'accepted', now(), now());` +
      ' INSERT INTO attempt (id, job_id, provider, state, request_key, created_at, updated_at)' +
      ` VALUES ('${attemptId}', '${jobId}', 'fake-a', 'starting', 'attempt-${attemptId}', now(), now());` +
      ' COMMIT;',
  );
  return { jobId, attemptId };
}

/** An unannounced job (above), and its attempt message in the DLQ with a real x-death header. */
function deadLetteredJob(owner, prompt) {
  const { jobId, attemptId } = unannouncedJob(owner, prompt);
  const classpath = [m2('com', 'rabbitmq', 'amqp-client', '5.20.0', 'amqp-client-5.20.0.jar'), m2('org', 'slf4j', 'slf4j-api', '1.7.36', 'slf4j-api-1.7.36.jar')];
  execFileSync('java', ['-cp', classpath.join(':'), path.join(REPO_ROOT, 'web-tests', 'tools', 'DeadLetter.java'), AMQP, attemptId, jobId], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { jobId, attemptId };
}

async function operatorPage() {
  const sub = unique('web-otto');
  const bearer = token(sub, 'operator');
  const page = await newPage(browser);
  await signIn(page, bearer);
  await page.getByTestId('console').waitFor({ state: 'visible' });
  return { page, sub, bearer };
}

async function setKillSwitch(bearer, enabled) {
  const response = await fetch(`${API}/admin/fallback`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(enabled ? { enabled } : { enabled, reason: 'web test' }),
  });
  assert.equal(response.status, 200);
}

test('a user without the operator role sees none of the console, and the admin API answers 403', async () => {
  for (const groups of [undefined, 'user,reviewer']) {
    const bearer = token(unique('web-plain'), groups);
    const page = await newPage(browser);
    const me = page.waitForResponse((r) => new URL(r.url()).pathname === '/me');
    await signIn(page, bearer);
    assert.deepEqual((await (await me).json()).console, [], 'the server names no console section');
    await page.getByTestId('jobs-list').waitFor({ state: 'attached' });
    assert.equal(await page.getByTestId('console').isVisible(), false);
    assert.equal(await page.locator('[data-testid^="console-"]:visible').count(), 0);
    assert.equal(await page.getByTestId('dlq-replay-all').isVisible(), false);
    for (const pathname of ADMIN_READS) {
      const response = await fetch(API + pathname, { headers: { Authorization: `Bearer ${bearer}` } });
      assert.equal(response.status, 403, `${pathname} as ${groups ?? 'user'}`);
      assert.match(response.headers.get('content-type'), /^application\/problem\+json/);
    }
    for (const [pathname, body] of [
      ['/admin/dlq/replay', '{"ids":["1"]}'],
      ['/admin/bulk/dlq-replay/dry-run', '{"filter":{}}'],
      ['/admin/providers/fake-b/pause', '{"reason":"not mine to pause"}'],
    ]) {
      const refused = await fetch(API + pathname, {
        method: 'POST',
        headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
        body,
      });
      assert.equal(refused.status, 403, `POST ${pathname} as ${groups ?? 'user'}`);
    }
    assertNoPageErrors(page);
    await page.close();
  }
});

test('an operator replays one dead letter after confirming, and watches its job complete in the page', async () => {
  const { page, sub, bearer } = await operatorPage();
  const { jobId, attemptId } = deadLetteredJob(sub, `fix the off-by-one in last_index (${unique('dlq-one')})`);
  await page.getByTestId('dlq-refresh').click();
  const row = page.locator(`[data-testid="dlq-row"][data-job-id="${jobId}"]`);
  await row.waitFor();
  assert.equal(await row.getAttribute('data-attempt-id'), attemptId);
  assert.equal(await row.getByTestId('dlq-reason').innerText(), 'rejected');
  assert.equal(await row.getByTestId('dlq-deaths').innerText(), '1');
  assert.equal((await sql(`SELECT state FROM job WHERE id = '${jobId}'`)), 'accepted', 'nothing ran the job yet');

  // The job opens in the job panel of the same page (no navigation): not run yet.
  await page.evaluate(() => {
    window.sameDocument = true;
  });
  await row.getByTestId('dlq-job').click();
  await waitForJobState(page, 'accepted');
  const letterId = await row.getAttribute('data-id');

  // Asking first: "Keep them" sends nothing.
  const replays = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/admin/dlq/replay') replays.push(r.postDataJSON());
  });
  await row.getByTestId('dlq-replay-one').click();
  assert.match(await page.getByTestId('dlq-confirm-text').innerText(), /^Replay this dead letter\?/);
  await page.getByTestId('dlq-confirm-no').click();
  assert.equal(await page.getByTestId('dlq-confirm').isVisible(), false);
  assert.equal(replays.length, 0, 'declining the confirmation sends nothing');

  await row.getByTestId('dlq-replay-one').click();
  await page.getByTestId('dlq-confirm-yes').click();
  await eventually(async () => /^Replayed 1, skipped 0/.test(await page.getByTestId('dlq-status').innerText()), 'replay result shown');
  assert.deepEqual(replays, [{ ids: [letterId] }], 'one request, for that letter');
  await row.waitFor({ state: 'detached' });
  await page.locator('[data-testid="audit-row"][data-action="dlq.replay"]', { hasText: sub }).first().waitFor();

  // Watched until it completes, in the same document.
  await waitForJobState(page, 'completed', 60_000);
  assert.match(await page.getByTestId('job-winner').innerText(), /Attempt 1 \(fake-a\)/);
  assert.equal(await page.evaluate(() => window.sameDocument), true, 'the page was never left');
  const entries = await apiGet('/admin/audit?limit=50', bearer);
  assert.ok(
    entries.some((e) => e.actor === sub && e.action === 'dlq.replay' && e.details.includes(letterId)),
    'the replay is audited under the operator',
  );
  assertNoPageErrors(page);
});

test('selected dead letters are replayed one by one with progress; "Replay all" is a bulk replay counted first', async () => {
  const { page, sub, bearer } = await operatorPage();
  const replays = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/admin/dlq/replay') replays.push(r.postDataJSON());
  });
  const jobs = [1, 2].map((n) => deadLetteredJob(sub, `fix the off-by-one in last_index (${unique(`dlq-sel-${n}`)})`));
  const third = deadLetteredJob(sub, `fix the off-by-one in last_index (${unique('dlq-all')})`);
  await page.getByTestId('dlq-refresh').click();
  for (const { jobId } of jobs) {
    const row = page.locator(`[data-testid="dlq-row"][data-job-id="${jobId}"]`);
    await row.getByTestId('dlq-select').check();
  }
  assert.equal(await page.getByTestId('dlq-replay-selected').innerText(), 'Replay selected (2)');
  const statuses = [];
  await page.exposeFunction('recordStatus', (text) => statuses.push(text));
  await page.evaluate(() => {
    const status = document.querySelector('[data-testid="dlq-status"]');
    new MutationObserver(() => window.recordStatus(status.textContent)).observe(status, { childList: true, characterData: true, subtree: true });
  });
  await page.getByTestId('dlq-replay-selected').click();
  assert.match(await page.getByTestId('dlq-confirm-text').innerText(), /^Replay 2 dead letters\?/);
  await page.getByTestId('dlq-confirm-yes').click();
  await eventually(async () => /^Replayed 2, skipped 0/.test(await page.getByTestId('dlq-status').innerText()), 'both replayed');
  assert.ok(statuses.includes('Replaying 1 of 2…') && statuses.includes('Replaying 2 of 2…'), `progress shown: ${statuses}`);

  assert.equal(replays.length, 2, 'one request per selected letter');

  // "Replay all": the bulk dlq-replay with the empty filter; its count is shown, then confirmed.
  const thirdRow = page.locator(`[data-testid="dlq-row"][data-job-id="${third.jobId}"]`);
  await thirdRow.waitFor();
  const runs = recordPosts(page, '/admin/bulk/dlq-replay/run');
  const dryRun = nextDryRun(page, 'dlq-replay');
  await page.getByTestId('dlq-replay-all').click();
  const answered = await dryRun;
  assert.deepEqual(answered.request().postDataJSON(), { filter: {} }, 'every pending dead letter');
  const counted = await answered.json();
  const text = page.locator('[data-testid="dlq-confirm-text"][data-count]');
  await text.waitFor();
  const shown = Number(await text.getAttribute('data-count'));
  assert.ok(shown >= 1 && shown === counted.count, `the count shown (${shown}) is the dry run's (${counted.count})`);
  assert.match(await text.innerText(), new RegExp(`^Replay ${shown} dead letters?\\?`));
  const own = await apiPost('/admin/bulk/dlq-replay/dry-run', { filter: {} }, bearer);
  assert.equal(own.body.count, shown, "the API's own dry run counts the same");
  assert.equal(runs.length, 0, 'nothing runs before the confirmation');
  await page.getByTestId('dlq-confirm-yes').click();
  await page.locator('[data-testid="dlq-progress"][data-state="done"]').waitFor({ timeout: 60_000 });
  const outcome = /^Done: (\d+) replayed, (\d+) skipped, (\d+) refused/.exec(await page.getByTestId('dlq-status').innerText());
  assert.ok(outcome, 'the outcome counts are shown');
  assert.equal(Number(outcome[1]) + Number(outcome[2]) + Number(outcome[3]), shown, 'each letter counted has its outcome');
  assert.equal(runs.length, 1);
  assert.deepEqual(runs[0].request.postDataJSON(), { filter: {}, token: counted.token }, "the dry run's token is presented");
  assert.ok(
    replays.every((b) => Object.keys(b).join() === 'ids' && b.ids.length === 1),
    `POST /admin/dlq/replay only ever gets one id: ${JSON.stringify(replays)}`,
  );
  await thirdRow.waitFor({ state: 'detached' });
  for (const { jobId } of [...jobs, third]) {
    await eventually(() => sql(`SELECT state FROM job WHERE id = '${jobId}'`) === 'completed', `job ${jobId} completed`, 60_000);
  }
  assertNoPageErrors(page);
});

test('a bulk replay by filter shows the count the API counts and a sample, runs only when confirmed, and is followed to done', async () => {
  const { page, sub, bearer } = await operatorPage();
  const letters = [1, 2, 3].map((n) => deadLetteredJob(sub, `fix the off-by-one in last_index (${unique(`bulk-${n}`)})`));
  await waitForPending(sub, bearer, 3);
  const form = page.getByTestId('bulk-form');
  const replayRuns = recordPosts(page, '/admin/bulk/dlq-replay/run');
  const discardRuns = recordPosts(page, '/admin/bulk/dlq-discard/run');
  const text = page.locator('[data-testid="bulk-confirm-text"][data-count]');

  // A discard needs a reason: without one, nothing is sent; "Cancel" sends nothing either.
  await form.getByTestId('bulk-action').selectOption('dlq-discard');
  await form.getByTestId('bulk-owner').fill(sub);
  await form.getByTestId('bulk-dry-run').click();
  await text.waitFor();
  assert.match(await text.innerText(), /^Discard 3 dead letters\?/);
  await page.getByTestId('bulk-confirm-yes').click();
  assert.equal(await page.getByTestId('bulk-confirm-reason').evaluate((input) => input.validity.valid), false);
  await page.getByTestId('bulk-confirm-no').click();
  assert.equal(await page.getByTestId('bulk-confirm').isVisible(), false);
  assert.equal(discardRuns.length, 0, 'no reason, then cancelled: nothing sent');

  // The replay: the page's dry run counts what the API's own dry run counts, and shows the sample.
  await form.getByTestId('bulk-action').selectOption('dlq-replay');
  const dryRun = nextDryRun(page, 'dlq-replay');
  await form.getByTestId('bulk-dry-run').click();
  const answered = await dryRun;
  assert.deepEqual(answered.request().postDataJSON(), { filter: { owner: sub } });
  const { token } = await answered.json();
  await text.waitFor();
  const own = await apiPost('/admin/bulk/dlq-replay/dry-run', { filter: { owner: sub } }, bearer);
  assert.equal(own.status, 200);
  assert.equal(own.body.count, 3);
  assert.equal(await text.getAttribute('data-count'), String(own.body.count));
  assert.match(await text.innerText(), /^Replay 3 dead letters\?/);
  const sampled = await page.getByTestId('bulk-sample-item').evaluateAll((rows) => rows.map((r) => r.dataset.jobId));
  assert.deepEqual(sampled.sort(), letters.map((l) => l.jobId).sort());
  assert.equal(replayRuns.length, 0, 'nothing runs before the confirmation');

  const reason = `replayed from the console (${unique('bulk-reason')})`;
  await page.getByTestId('bulk-confirm-reason').fill(reason);
  await page.getByTestId('bulk-confirm-yes').click();
  await page.locator('[data-testid="bulk-progress"][data-state="done"]').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('bulk-status').innerText(), /^Done: 3 replayed, 0 skipped, 0 refused/);
  assert.deepEqual(await page.getByTestId('bulk-progress').evaluate((bar) => [bar.value, bar.max]), [3, 3]);
  assert.equal(replayRuns.length, 1);
  assert.deepEqual(replayRuns[0].request.postDataJSON(), { filter: { owner: sub }, token, reason });
  const started = await (await replayRuns[0].response).json();

  // Replayed for real, under the operator's name, listed among the recent bulk actions and audited.
  const settled = await apiGet(`/admin/dlq?owner=${encodeURIComponent(sub)}&state=all`, bearer);
  assert.deepEqual(
    settled.items.map((d) => [d.jobId, d.state, d.settledBy, d.settleReason]).sort(),
    letters.map((l) => [l.jobId, 'replayed', sub, reason]).sort(),
  );
  await page.locator(`[data-testid="bulk-recent-row"][data-id="${started.id}"][data-state="done"]`).waitFor();
  const entries = await apiGet('/admin/audit?limit=50', bearer);
  assert.ok(
    entries.some((e) => e.actor === sub && e.action === 'bulk.dlq-replay' && e.reason === reason),
    'the bulk action is audited under the operator',
  );
  for (const { jobId } of letters) {
    await eventually(() => sql(`SELECT state FROM job WHERE id = '${jobId}'`) === 'completed', `job ${jobId} completed`, 60_000);
  }
  assertNoPageErrors(page);
});

test('a set that changed since the dry run is refused (409) with nothing done, and a new dry run is offered', async () => {
  const { page, sub, bearer } = await operatorPage();
  [1, 2].forEach((n) => deadLetteredJob(sub, `fix the off-by-one in last_index (${unique(`stale-${n}`)})`));
  await waitForPending(sub, bearer, 2);
  const form = page.getByTestId('bulk-form');
  await form.getByTestId('bulk-action').selectOption('dlq-replay');
  await form.getByTestId('bulk-owner').fill(sub);
  await form.getByTestId('bulk-dry-run').click();
  await page.locator('[data-testid="bulk-confirm-text"][data-count="2"]').waitFor();

  // Another letter arrives between the dry run and the confirmation.
  deadLetteredJob(sub, `fix the off-by-one in last_index (${unique('stale-late')})`);
  await waitForPending(sub, bearer, 3);
  const runs = recordPosts(page, '/admin/bulk/dlq-replay/run');
  await page.getByTestId('bulk-confirm-yes').click();
  const refused = page.getByTestId('bulk-confirm').locator('[data-testid="problem"][data-code="bulk-set-changed"]');
  await refused.waitFor();
  assert.equal((await runs[0].response).status(), 409);
  assert.match(await refused.innerText(), /Nothing was done: the dry run counted 2, the filter matches 3 now/);
  assert.equal((await apiGet(`/admin/dlq/count?owner=${encodeURIComponent(sub)}`, bearer)).count, 3, 'nothing was replayed');

  // "Dry run again" counts the new set; confirmed, it runs.
  await page.getByTestId('bulk-dry-run-again').click();
  await page.locator('[data-testid="bulk-confirm-text"][data-count="3"]').waitFor();
  await page.getByTestId('bulk-confirm-yes').click();
  await page.locator('[data-testid="bulk-progress"][data-state="done"]').waitFor({ timeout: 30_000 });
  assert.match(await page.getByTestId('bulk-status').innerText(), /^Done: 3 replayed, 0 skipped, 0 refused/);
  assert.equal(runs.length, 2);
  assert.equal((await runs[1].response).status(), 200);
  assert.equal((await apiGet(`/admin/dlq/count?owner=${encodeURIComponent(sub)}`, bearer)).count, 0);
  assertNoPageErrors(page);
});

test('a bulk cancel by filter runs in the background and its progress is read until done', async () => {
  const { page, sub, bearer } = await operatorPage();
  const jobs = [1, 2, 3].map((n) => unannouncedJob(sub, `fix the off-by-one in last_index (${unique(`cancel-${n}`)})`));
  const form = page.getByTestId('bulk-form');
  await form.getByTestId('bulk-action').selectOption('job-cancel');
  await form.getByTestId('bulk-owner').fill(sub);
  await form.getByTestId('bulk-state').selectOption('accepted');
  const dryRun = nextDryRun(page, 'job-cancel');
  await form.getByTestId('bulk-dry-run').click();
  assert.deepEqual((await dryRun).request().postDataJSON(), { filter: { owner: sub, state: 'accepted' } });
  const text = page.locator('[data-testid="bulk-confirm-text"][data-count="3"]');
  await text.waitFor();
  assert.match(await text.innerText(), /^Cancel 3 jobs\?/);

  const runs = recordPosts(page, '/admin/bulk/job-cancel/run');
  const polls = [];
  page.on('request', (r) => {
    const { pathname } = new URL(r.url());
    if (r.method() === 'GET' && /^\/admin\/bulk\/\d+$/.test(pathname)) polls.push(pathname);
  });
  await page.getByTestId('bulk-confirm-yes').click();
  await page.locator('[data-testid="bulk-progress"][data-state="done"]').waitFor({ timeout: 60_000 });
  const answer = await runs[0].response;
  assert.equal(answer.status(), 202, 'jobs are processed in the background');
  const started = await answer.json();
  assert.ok(polls.length >= 1 && polls.every((p) => p === `/admin/bulk/${started.id}`), `progress read: ${polls}`);
  assert.match(await page.getByTestId('bulk-status').innerText(), /^Done: 3 cancelled, 0 skipped, 0 refused/);
  for (const { jobId } of jobs) assert.equal(sql(`SELECT state FROM job WHERE id = '${jobId}'`), 'cancelled');
  const progress = await apiGet(`/admin/bulk/${started.id}`, bearer);
  assert.deepEqual([progress.state, progress.total, progress.done, progress.requestedBy], ['done', 3, 3, sub]);
  await page.locator(`[data-testid="bulk-recent-row"][data-id="${started.id}"][data-state="done"]`).waitFor();
  assertNoPageErrors(page);
});

test('a quarantined attempt is resolved with its usage and a required reason, and its job completes', async () => {
  const prompt = `fix the off-by-one in last_index (${unique('quarantine')})`;
  await scriptProvider(prompt, [{ omitUsage: true }]);
  const user = token(unique('web-owner'));
  const created = await fetch(`${API}/jobs`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${user}`, 'Content-Type': 'application/json', 'Idempotency-Key': unique('q') },
    body: JSON.stringify({ input: { prompt, repository: 'demo', baseRef: 'main' }, provider: 'fake-a' }),
  });
  assert.equal(created.status, 201);
  const job = await created.json();
  await eventually(async () => (await apiGet(`/jobs/${job.id}`, user)).attempts[0].quarantined, 'attempt quarantined', 30_000);

  const { page, sub, bearer } = await operatorPage();
  const row = page.locator('[data-testid="quarantine-row"]', { has: page.locator(`a[href="#/jobs/${job.id}"]`) });
  await row.waitFor({ timeout: 15_000 });
  await row.getByTestId('resolve-prompt').fill('12');
  await row.getByTestId('resolve-completion').fill('40');
  const posts = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && /\/admin\/attempts\/.+\/resolve$/.test(new URL(r.url()).pathname)) posts.push(r.postDataJSON());
  });
  await row.getByTestId('resolve-submit').click();
  assert.equal(posts.length, 0, 'no reason: nothing sent');
  await row.getByTestId('resolve-reason').fill('provider invoice line 7');
  await row.getByTestId('resolve-submit').click();
  await eventually(async () => /resolved/.test(await page.getByTestId('quarantine-status').innerText()), 'resolved');
  assert.deepEqual(posts, [{ usage: { promptTokens: 12, completionTokens: 40 }, reason: 'provider invoice line 7' }]);
  await row.waitFor({ state: 'detached' });
  await eventually(async () => (await apiGet(`/jobs/${job.id}`, user)).state === 'completed', 'job completed', 60_000);
  const entries = await apiGet('/admin/audit?limit=50', bearer);
  assert.ok(entries.some((e) => e.actor === sub && e.reason === 'provider invoice line 7'), 'the resolution is audited');
  assertNoPageErrors(page);
});

test('the kill switch shows who set it and why, needs a reason to turn off, and turns back on', async () => {
  const { page, sub, bearer } = await operatorPage();
  try {
    await page.locator('[data-testid="killswitch-state"][data-enabled="true"]').waitFor();
    const puts = [];
    page.on('request', (r) => {
      if (r.method() === 'PUT' && new URL(r.url()).pathname === '/admin/fallback') puts.push(r.postDataJSON());
    });
    assert.equal(await page.getByTestId('killswitch-flip').innerText(), 'Turn fallback off');
    await page.getByTestId('killswitch-flip').click();
    assert.equal(puts.length, 0, 'turning off without a reason sends nothing');
    const reason = `provider B returns garbage (${unique('ks')})`;
    await page.getByTestId('killswitch-reason-input').fill(reason);
    await page.getByTestId('killswitch-flip').click();
    await page.locator('[data-testid="killswitch-state"][data-enabled="false"]').waitFor();
    assert.equal(await page.getByTestId('killswitch-reason').innerText(), reason);
    assert.equal(await page.getByTestId('killswitch-by').innerText(), sub);
    assert.deepEqual(await apiGet('/admin/fallback', bearer).then((s) => [s.enabled, s.reason, s.setBy]), [false, reason, sub]);

    await page.getByTestId('killswitch-flip').click();
    await page.locator('[data-testid="killswitch-state"][data-enabled="true"]').waitFor();
    assert.deepEqual(puts, [{ enabled: false, reason }, { enabled: true }]);

    // The audit trail filters by action and by text.
    await page.getByTestId('audit-refresh').click();
    await page.locator('[data-testid="audit-row"]', { hasText: reason }).first().waitFor();
    await page.getByTestId('audit-filter').fill(sub);
    const actors = await page.getByTestId('audit-actor').allInnerTexts();
    assert.ok(actors.length >= 2 && actors.every((a) => a === sub), `only ${sub}'s records: ${actors}`);
    const action = await page.locator('[data-testid="audit-row"]', { hasText: reason }).first().getAttribute('data-action');
    await page.getByTestId('audit-action').selectOption(action);
    const shown = await page.getByTestId('audit-row').evaluateAll((rows) => rows.map((r) => r.dataset.action));
    assert.ok(shown.length >= 1 && shown.every((a) => a === action), `only ${action}: ${shown}`);
    await page.getByTestId('audit-filter').fill(reason);
    assert.equal(await page.getByTestId('audit-row').count(), 1, 'the turn-off record, found by its reason');
  } finally {
    await setKillSwitch(bearer, true);
  }
  assertNoPageErrors(page);
});

test('an acceptance run is requested from the console and followed to its per-task results', async () => {
  const { page, bearer } = await operatorPage();
  const row = page.locator('[data-testid="provider-row"][data-provider="fake-b"]');
  await row.waitFor();
  const before = (await apiGet('/admin/providers', bearer)).find((p) => p.name === 'fake-b').latestRun;
  await page.evaluate(() => {
    window.progressSeen = false;
    new MutationObserver(() => {
      if (document.querySelector('[data-provider="fake-b"] [data-testid="provider-progress"]')) window.progressSeen = true;
    }).observe(document.getElementById('providers-body'), { childList: true, subtree: true });
  });
  const requested = page.waitForResponse((r) => r.request().method() === 'POST' && /\/admin\/providers\/fake-b\/acceptance$/.test(r.url()));
  await row.getByTestId('provider-accept').click();
  const asked = await (await requested).json();
  assert.notEqual(asked.id, before && before.id, 'a new run');
  // Followed in the page until it finishes: progress while it goes, then the run's own results.
  await row.locator(`[data-run-id="${asked.id}"][data-state="passed"], [data-run-id="${asked.id}"][data-state="failed"]`).waitFor({ timeout: 60_000 });
  assert.equal(await page.evaluate(() => window.progressSeen), true, 'a progress bar while the run went');
  const run = (await apiGet('/admin/providers', bearer)).find((p) => p.name === 'fake-b').latestRun;
  assert.equal(run.id, asked.id);
  const results = row.getByTestId('provider-results').locator('li');
  assert.equal(await results.count(), run.results.length);
  assert.deepEqual(
    await results.evaluateAll((items) => items.map((li) => li.dataset.passed)),
    run.results.map((t) => String(Boolean(t.passed))),
  );
  assert.equal(await row.getByTestId('provider-accept').isEnabled(), true);
  assertNoPageErrors(page);
});

test('a provider is paused from the console with a required reason, and its resume announces the held attempts again', async () => {
  const { page, sub, bearer } = await operatorPage();
  const name = 'fake-b';
  const row = page.locator(`[data-testid="provider-row"][data-provider="${name}"]`);
  await row.waitFor();
  assert.equal(await row.getAttribute('data-paused'), 'false');
  const pauses = recordPosts(page, `/admin/providers/${name}/pause`);
  const resumes = recordPosts(page, `/admin/providers/${name}/resume`);
  const pauseReason = `fake-b answers garbage (${unique('pause')})`;
  const resumeReason = `fake-b is fixed (${unique('resume')})`;
  try {
    await row.getByTestId('provider-pause').click();
    assert.match(await page.getByTestId('provider-pause-text').innerText(), /^Pause fake-b\?/);
    await page.getByTestId('provider-pause-yes').click();
    assert.equal(pauses.length, 0, 'no reason: nothing sent');
    await page.getByTestId('provider-pause-reason').fill(pauseReason);
    await page.getByTestId('provider-pause-yes').click();
    await page.locator(`[data-testid="provider-row"][data-provider="${name}"][data-paused="true"]`).waitFor();
    assert.deepEqual(pauses[0].request.postDataJSON(), { reason: pauseReason });
    const paused = (await apiGet('/admin/providers', bearer)).find((p) => p.name === name).paused;
    assert.deepEqual([paused.pausedBy, paused.reason], [sub, pauseReason]);
    const shown = await row.getByTestId('provider-paused').innerText();
    assert.ok(shown.startsWith(`Paused by ${sub} at `) && shown.endsWith(`: ${pauseReason}`), shown);

    // A job naming the paused provider is announced and held: its attempt waits, unclaimed.
    const user = token(unique('web-owner'));
    const created = await fetch(`${API}/jobs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${user}`, 'Content-Type': 'application/json', 'Idempotency-Key': unique('held') },
      body: JSON.stringify({
        input: { prompt: `fix the off-by-one in last_index (${unique('held')})`, repository: 'demo', baseRef: 'main' },
        provider: name,
      }),
    });
    assert.equal(created.status, 201);
    const job = await created.json();
    const attemptId = job.attempts[0].id;
    await eventually(
      () => sql(`SELECT count(*) FROM outbox WHERE attempt_id = '${attemptId}' AND sent_at IS NULL`) === '0',
      'the attempt was announced',
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal(sql(`SELECT state || ' ' || coalesce(lease_owner, 'unclaimed') FROM attempt WHERE id = '${attemptId}'`), 'starting unclaimed');

    await row.getByTestId('provider-resume').click();
    assert.match(await page.getByTestId('provider-pause-text').innerText(), /^Resume fake-b\?/);
    await page.getByTestId('provider-pause-yes').click();
    assert.equal(resumes.length, 0, 'no reason: nothing sent');
    await page.getByTestId('provider-pause-reason').fill(resumeReason);
    await page.getByTestId('provider-pause-yes').click();
    await page.locator(`[data-testid="provider-row"][data-provider="${name}"][data-paused="false"]`).waitFor();
    assert.deepEqual(resumes[0].request.postDataJSON(), { reason: resumeReason });
    const resumed = await (await resumes[0].response).json();
    assert.ok(resumed.reannounced >= 1, `the held attempt is announced again: ${JSON.stringify(resumed)}`);
    const count = resumed.reannounced === 1 ? '1 held attempt' : `${resumed.reannounced} held attempts`;
    assert.equal(await page.getByTestId('providers-status').innerText(), `${name} resumed: ${count} announced again.`);
    assert.equal((await apiGet('/admin/providers', bearer)).find((p) => p.name === name).paused, null);
    await eventually(async () => (await apiGet(`/jobs/${job.id}`, user)).state === 'completed', 'the held job completed', 60_000);

    const entries = await apiGet('/admin/audit?limit=50', bearer);
    assert.ok(entries.some((e) => e.actor === sub && e.action === 'provider.pause' && e.reason === pauseReason), 'pause audited');
    assert.ok(entries.some((e) => e.actor === sub && e.action === 'provider.resume' && e.reason === resumeReason), 'resume audited');
    await page.locator('[data-testid="audit-row"][data-action="provider.resume"]', { hasText: resumeReason }).waitFor();
  } finally {
    const cleanup = await apiPost(`/admin/providers/${name}/resume`, { reason: 'web test cleanup' }, bearer);
    assert.equal(cleanup.status, 200);
  }
  assertNoPageErrors(page);
});

test('spend per provider per day is drawn from GET /admin/spend, and the console is photographed', async () => {
  const { page, sub, bearer } = await operatorPage();
  const spend = await apiGet('/admin/spend', bearer);
  await page.getByTestId('spend-svg').waitFor();
  const bars = await page.getByTestId('spend-bar').evaluateAll((rects) =>
    rects.map((r) => `${r.dataset.day} ${r.dataset.provider} ${r.dataset.tokens}`),
  );
  assert.ok(spend.days.length > 0, 'the earlier tests spent tokens today');
  assert.deepEqual(bars.sort(), spend.days.map((d) => `${d.day} ${d.provider} ${d.promptTokens + d.completionTokens}`).sort());

  // A dead letter in the picture; replayed afterwards so nothing is left waiting.
  const letter = deadLetteredJob(sub, `fix the off-by-one in last_index (${unique('dlq-photo')})`);
  await page.getByTestId('dlq-refresh').click();
  const row = page.locator(`[data-testid="dlq-row"][data-job-id="${letter.jobId}"]`);
  await row.waitFor();
  await row.getByTestId('dlq-select').check();
  // An owner's budgets in the picture too (money.test.mjs checks their figures).
  const owner = unique('web-photo-owner');
  for (const [period, limitUsd] of [['day', 5], ['month', 100]]) {
    const set = await fetch(`${API}/admin/budgets/${owner}/${period}`, {
      method: 'PUT',
      headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ limitUsd, reason: 'web test photo' }),
    });
    assert.equal(set.status, 200);
  }
  await page.getByTestId('budgets-owner').fill(owner);
  await page.getByTestId('budgets-show').click();
  await page.locator('[data-testid="budget-row"][data-period="month"]').waitFor();
  const dir = path.join(REPO_ROOT, 'docs', 'screenshots');
  await mkdir(dir, { recursive: true });
  await page.getByTestId('console').screenshot({ path: path.join(dir, 'operator-console.png') });
  const replay = await fetch(`${API}/admin/dlq/replay`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ ids: [await row.getAttribute('data-id')] }),
  });
  assert.equal(replay.status, 200);
  assertNoPageErrors(page);
});
