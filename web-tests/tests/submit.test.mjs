// "Generate patch" is one intention: a double click, and an answer lost on the way back followed
// by a reload, both land on one job, because the page stores the Idempotency-Key before sending.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  API,
  assertNoPageErrors,
  browserForThisFile,
  eventually,
  jobIdOf,
  jobsWithPrompt,
  newPage,
  recordPosts,
  signIn,
  submitPrompt,
  token,
  unique,
  waitForJobState,
} from './support.mjs';

const browser = browserForThisFile();

const pendingDraft = (page) => page.evaluate(() => sessionStorage.getItem('jobapi.pending.job'));

test('a double-clicked "Generate patch" sends one key twice and makes exactly one job', async () => {
  const bearer = token(unique('web-double'));
  const page = await newPage(browser);
  await signIn(page, bearer);
  const posts = recordPosts(page, '/jobs');
  const prompt = unique('double click fix the off-by-one');
  await page.getByTestId('prompt').fill(prompt);

  // Two clicks in one task; the second re-enables the button first, so the page's correctness
  // cannot rest on the button being disabled while the first request is in flight.
  await page.evaluate(() => {
    const button = document.getElementById('submit-button');
    button.click();
    button.disabled = false;
    button.click();
  });

  await eventually(() => posts.length === 2, 'two POST /jobs requests');
  const keys = await Promise.all(posts.map(async (p) => (await p.request.allHeaders())['idempotency-key']));
  assert.ok(keys[0], 'the first POST carries an Idempotency-Key');
  assert.equal(keys[1], keys[0], 'both POSTs carry the same Idempotency-Key');

  const responses = await Promise.all(posts.map((p) => p.response));
  const answers = await Promise.all(
    responses.map(async (r) => ({ status: r.status(), replayed: (await r.allHeaders())['idempotent-replayed'], id: (await r.json()).id })),
  );
  answers.sort((a, b) => a.status - b.status);
  assert.deepEqual(answers.map((a) => a.status), [200, 201], 'one created, one replayed');
  assert.equal(answers[0].replayed, 'true', 'the 200 says Idempotent-Replayed: true');
  assert.equal(answers[0].id, answers[1].id, 'both answers name the same job');

  const jobs = await jobsWithPrompt(bearer, prompt);
  assert.equal(jobs.length, 1, 'GET /jobs lists exactly one job with this prompt');
  assert.equal(jobs[0].id, answers[1].id);
  assert.equal(jobs[0].idempotencyKey, keys[0]);

  await eventually(async () => page.url().endsWith(`#/jobs/${jobs[0].id}`), 'the page shows the job');
  assert.equal(await pendingDraft(page), null, 'the draft is settled once a job id came back');

  // Reloading now sends nothing: the settled draft is gone.
  await page.reload();
  await page.getByTestId('job-state').waitFor();
  assert.equal(jobIdOf(page.url()), jobs[0].id);
  assert.equal(posts.length, 2, 'no POST /jobs after the reload');
  assert.equal((await jobsWithPrompt(bearer, prompt)).length, 1);
  assertNoPageErrors(page);
});

test('an answer lost on the way back is resent with the same key on reload and lands on the same job', async () => {
  const bearer = token(unique('web-lost'));
  const page = await newPage(browser);
  await signIn(page, bearer);
  const prompt = unique('lost answer fix the off-by-one');

  // The first POST /jobs reaches the server; its answer never reaches the page.
  let dropped = null;
  const dropAnswer = async (route) => {
    const request = route.request();
    if (request.method() !== 'POST' || dropped) return route.fallback();
    const answer = await route.fetch();
    dropped = { status: answer.status(), key: (await request.allHeaders())['idempotency-key'] };
    await route.abort('connectionreset');
  };
  await page.route((url) => url.pathname === '/jobs', dropAnswer);

  await submitPrompt(page, prompt);
  const problem = page.locator('#submit-problem [data-testid="problem"]');
  await problem.waitFor();
  assert.equal(await problem.getAttribute('data-code'), 'network-error');
  assert.match(await problem.innerText(), /kept/);
  assert.equal(dropped.status, 201, 'the server made the job although the page saw no answer');

  const draft = JSON.parse(await pendingDraft(page));
  assert.equal(draft.key, dropped.key, 'the draft keeps the key that was sent');
  assert.equal(draft.body.input.prompt, prompt);
  assert.equal((await jobsWithPrompt(bearer, prompt)).length, 1);

  // Reload: the page resends the pending draft by itself, with the same key.
  await page.unroute((url) => url.pathname === '/jobs', dropAnswer);
  const posts = recordPosts(page, '/jobs');
  await page.reload();
  await eventually(() => posts.length === 1, 'the page resends the draft after the reload');
  assert.equal((await posts[0].request.allHeaders())['idempotency-key'], dropped.key);
  const resent = await posts[0].response;
  assert.equal(resent.status(), 200);
  assert.equal((await resent.allHeaders())['idempotent-replayed'], 'true');

  const jobs = await jobsWithPrompt(bearer, prompt);
  assert.equal(jobs.length, 1, 'still exactly one job');
  await eventually(async () => page.url().endsWith(`#/jobs/${jobs[0].id}`), 'the page shows that job');
  await waitForJobState(page, 'completed');
  assert.equal(await pendingDraft(page), null);
  assert.match(await page.getByTestId('submit-status').innerText(), /same job/);
  assert.equal(new URL(page.url()).origin, new URL(API).origin);
  assertNoPageErrors(page);
});
