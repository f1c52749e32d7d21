// "Try another provider" appears only when the server offers `request_attempt` (the earlier
// attempt failed), and a double click on it makes one attempt: the attempt request's
// Idempotency-Key is stored before it is sent, like the job draft.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  apiGet,
  assertNoPageErrors,
  browserForThisFile,
  eventually,
  jobIdOf,
  newPage,
  recordPosts,
  scriptProvider,
  signIn,
  submitPrompt,
  token,
  unique,
  visibleActions,
} from './support.mjs';

const browser = browserForThisFile();

test('after a failed attempt, a double-clicked "Try another provider" makes exactly one new attempt', async () => {
  const bearer = token(unique('web-fallback'));
  const prompt = unique('provider refuses fallback');
  // The provider refuses with 400: the attempt fails, no attempt is open, fallback is allowed.
  await scriptProvider(prompt, [{ status: 400 }]);

  const page = await newPage(browser);
  await signIn(page, bearer);
  await submitPrompt(page, prompt);
  await page.locator('[data-testid="attempt-row"][data-state="failed"]').waitFor();
  const jobId = jobIdOf(page.url());
  await page.getByTestId('action-request-attempt').waitFor();
  assert.deepEqual(await visibleActions(page), ['action-cancel', 'action-request-attempt']);
  assert.equal(await page.getByTestId('supersede-form').count(), 0, 'no supersede form for a user');

  const posts = recordPosts(page, `/jobs/${jobId}/attempts`);
  await page.getByTestId('request-attempt-provider').selectOption('fake-b');
  await page.evaluate(() => {
    const button = document.querySelector('[data-testid="action-request-attempt"]');
    button.click();
    button.disabled = false;
    button.click();
  });
  await eventually(() => posts.length === 2, 'two POST /attempts requests');
  const keys = await Promise.all(posts.map(async (p) => (await p.request.allHeaders())['idempotency-key']));
  assert.ok(keys[0]);
  assert.equal(keys[1], keys[0], 'both carry the same Idempotency-Key');
  for (const p of posts) assert.deepEqual(JSON.parse(p.request.postData()), { provider: 'fake-b' });
  const answers = await Promise.all(posts.map(async (p) => {
    const r = await p.response;
    return { status: r.status(), id: (await r.json()).id };
  }));
  answers.sort((a, b) => a.status - b.status);
  assert.deepEqual(answers.map((a) => a.status), [200, 201], 'one created, one replayed');
  assert.equal(answers[0].id, answers[1].id, 'both answers name the same attempt');

  const job = await apiGet(`/jobs/${jobId}`, bearer);
  assert.deepEqual(job.attempts.map((a) => a.provider), ['fake-a', 'fake-b'], 'exactly one new attempt');
  const rows = page.locator('[data-testid="attempt-row"]');
  await eventually(async () => (await rows.count()) === 2, 'the page lists two attempts');
  assert.equal(await rows.nth(1).getByTestId('attempt-provider').innerText(), 'fake-b');
  assert.equal(await page.evaluate((id) => sessionStorage.getItem(`jobapi.pending.attempt:${id}`), jobId), null);
  assertNoPageErrors(page);
});
