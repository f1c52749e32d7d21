// An attempt whose outcome is unknown blocks fallback: a user gets no "Try another provider" and
// no supersede form (only Cancel); a reviewer gets a supersede form whose reason is required,
// and superseding starts a new attempt and marks the old one superseded with that reason.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
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
  waitForJobState,
} from './support.mjs';

const browser = browserForThisFile();

test('an unknown attempt offers no fallback to a user and a supersede form to a reviewer', async () => {
  const prompt = unique('usage missing review');
  // No usage reported: the worker quarantines the attempt as `unknown` and the job needs review.
  await scriptProvider(prompt, [{ omitUsage: true }]);

  const page = await newPage(browser);
  await signIn(page, token(unique('web-user')));
  await submitPrompt(page, prompt);
  await waitForJobState(page, 'needs_review');
  await page.locator('[data-testid="attempt-row"][data-state="unknown"]').waitFor();
  const url = page.url();
  const jobId = jobIdOf(url);

  assert.deepEqual(await visibleActions(page), ['action-cancel'], 'a user may only cancel');
  assert.equal(await page.getByTestId('action-request-attempt').count(), 0, 'no "Try another provider"');
  assert.equal(await page.getByTestId('supersede-form').count(), 0, 'no supersede form for a user');
  assert.ok(await page.getByTestId('job-review').isVisible(), 'the review reason is shown');

  // The same job, seen by a reviewer (reviewers see every job).
  await page.getByTestId('sign-out').click();
  await page.getByTestId('token-input').waitFor();
  const reviewer = unique('web-reviewer');
  await signIn(page, token(reviewer, 'user,reviewer'));
  assert.equal(page.url(), url);
  await waitForJobState(page, 'needs_review');
  assert.equal(await page.getByTestId('job-id').innerText(), jobId);
  const form = page.getByTestId('supersede-form');
  await form.waitFor();
  assert.deepEqual(await visibleActions(page), ['action-cancel', 'action-supersede']);
  assert.equal(await page.getByTestId('action-request-attempt').count(), 0);
  const reason = page.getByTestId('supersede-reason');
  assert.equal(await reason.getAttribute('required'), '', 'the reason is required');

  // Without a reason nothing is sent.
  const posts = recordPosts(page, `/jobs/${jobId}/attempts`);
  await page.getByTestId('action-supersede').click();
  assert.equal(await reason.evaluate((el) => el.validity.valid), false);
  assert.equal(posts.length, 0, 'no request without a reason');

  const why = `provider reported no usage; reviewed in ${reviewer}`;
  await reason.fill(why);
  await page.getByTestId('supersede-provider').selectOption('fake-b');
  await page.getByTestId('action-supersede').click();
  await eventually(() => posts.length === 1, 'one POST /attempts');
  const sent = posts[0].request;
  assert.ok((await sent.allHeaders())['idempotency-key'], 'the attempt request carries an Idempotency-Key');
  assert.deepEqual(JSON.parse(sent.postData()), { provider: 'fake-b', supersede: { reason: why } });
  assert.equal((await posts[0].response).status(), 201);

  const rows = page.locator('[data-testid="attempt-row"]');
  await eventually(async () => (await rows.count()) === 2, 'a second attempt is listed');
  const first = rows.nth(0);
  await page.locator('[data-testid="attempt-row"]:first-child[data-state="superseded"]').waitFor();
  const recorded = await first.getByTestId('attempt-reason').innerText();
  assert.ok(recorded.includes(why), `the superseded attempt shows the reason: ${recorded}`);
  assert.ok(recorded.includes(`by ${reviewer}`), `and who superseded it: ${recorded}`);
  assert.equal(await rows.nth(1).getByTestId('attempt-provider').innerText(), 'fake-b');
  assert.equal(await page.evaluate((id) => sessionStorage.getItem(`jobapi.pending.attempt:${id}`), jobId), null);
  assertNoPageErrors(page);
});
