// A reload in the middle of an attempt shows the same job with the same controls: the URL carries
// the job id and the buttons come from the server's `actions`, not from anything the page kept.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertNoPageErrors,
  browserForThisFile,
  jobIdOf,
  jobsWithPrompt,
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

test('reloading while the attempt is starting shows the same job and the same buttons', async () => {
  const bearer = token(unique('web-reload'));
  const prompt = unique('slow provider reload');
  // The provider waits before its first byte, so the attempt stays `starting` while we reload.
  await scriptProvider(prompt, [{ delayMs: 8000 }]);

  const page = await newPage(browser);
  await signIn(page, bearer);
  await submitPrompt(page, prompt);

  // Running = a worker claimed the attempt and the request is with the provider.
  await waitForJobState(page, 'running', 15_000);
  await page.locator('[data-testid="attempt-row"][data-state="starting"]').waitFor();
  const url = page.url();
  const jobId = jobIdOf(url);
  const before = await visibleActions(page);
  assert.deepEqual(before, ['action-cancel'], 'Cancel only: no "Try another provider" while an attempt is starting');

  const posts = recordPosts(page, '/jobs');
  await page.reload();
  await page.locator('[data-testid="attempt-row"]').first().waitFor();
  assert.equal(page.url(), url, 'same URL after the reload');
  assert.equal(await page.getByTestId('job-id').innerText(), jobId, 'same job after the reload');
  assert.equal(await page.locator('[data-testid="attempt-row"][data-state="starting"]').count(), 1);
  assert.deepEqual(await visibleActions(page), before, 'same buttons after the reload');
  assert.equal(await page.getByTestId('action-request-attempt').count(), 0);
  assert.equal(posts.length, 0, 'the reload sent no new job');
  assert.equal((await jobsWithPrompt(bearer, prompt)).length, 1);

  // The Cancel button works, and a cancelled job offers nothing more.
  await page.getByTestId('action-cancel').click();
  await waitForJobState(page, 'cancelled');
  assert.deepEqual(await visibleActions(page), []);
  await page.getByTestId('no-actions').waitFor();
  assertNoPageErrors(page);
});
