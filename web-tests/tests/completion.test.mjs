// A job that completes shows its winner, the provider-reported usage, what the attempt cost at the
// price an operator set and the job's total, and the patch, with the +/- lines marked; the
// screenshot of that page is kept in docs/screenshots/completed-job.png.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { test } from 'node:test';
import {
  API,
  REPO_ROOT,
  apiGet,
  assertNoPageErrors,
  browserForThisFile,
  jobIdOf,
  micros,
  newPage,
  setPrice,
  signIn,
  submitPrompt,
  token,
  unique,
  usdText,
  visibleActions,
  waitForJobState,
} from './support.mjs';

const browser = browserForThisFile();

test('a completed job shows the winner, its usage, its cost and the diff', async () => {
  // Two and four dollars per million tokens: every cost is a whole number of millionths.
  const price = await setPrice('fake-a', 2, 4);
  const page = await newPage(browser);
  const bearer = token(unique('web-done'));
  await signIn(page, bearer);
  const prompt = `fix the off-by-one in last_index (${unique('completion')})`;
  await submitPrompt(page, prompt);
  await waitForJobState(page, 'completed');

  const diff = page.getByTestId('output-diff');
  await diff.locator('.line').first().waitFor();
  assert.match(await diff.innerText(), /len\(items\) - 1/);
  assert.equal((await diff.locator('.line.add').allInnerTexts()).map((t) => t.trim()).join('\n'), '+    return len(items) - 1');
  assert.equal((await diff.locator('.line.del').allInnerTexts()).map((t) => t.trim()).join('\n'), '-    return len(items)');

  const row = page.locator('[data-testid="attempt-row"][data-state="succeeded"]');
  assert.equal(await row.count(), 1);
  assert.equal(await row.getByTestId('attempt-winner').count(), 1, 'the succeeded attempt is marked winner');
  assert.match(await row.getByTestId('attempt-usage').innerText(), /^\d+ \/ \d+\s+reported by provider$/);
  assert.notEqual(await row.getByTestId('attempt-remote-id').innerText(), '—');

  // The cost is the API's costUsd: the reported tokens at the price in force at the claim.
  const attempt = (await apiGet(`/jobs/${jobIdOf(page.url())}`, bearer)).attempts[0];
  const { promptTokens, completionTokens } = attempt.usage;
  assert.equal(
    micros(attempt.costUsd),
    promptTokens * price.inputUsdPerMillionTokens + completionTokens * price.outputUsdPerMillionTokens,
    'the attempt was charged at the price just set',
  );
  const cost = row.getByTestId('attempt-cost');
  assert.equal(micros(await cost.getAttribute('data-usd')), micros(attempt.costUsd), 'the attempt shows its cost');
  assert.equal(await cost.innerText(), usdText(attempt.costUsd));
  const total = page.getByTestId('job-cost');
  assert.equal(micros(await total.getAttribute('data-usd')), micros(attempt.costUsd));
  assert.equal(await total.innerText(), `${usdText(attempt.costUsd)} for 1 attempt`);
  assert.match(await page.getByTestId('job-winner').innerText(), /Attempt 1 \(fake-a\)/);
  assert.deepEqual(await visibleActions(page), [], 'a completed job has no buttons');
  assert.equal(await page.getByTestId('job-polling').innerText(), '', 'polling stopped');
  const listed = page.locator('[data-testid="job-item"][data-state="completed"]', { hasText: prompt });
  await listed.waitFor();

  // The timeline is shown when the server has GET /jobs/{id}/timeline, and hidden when it is 404.
  const jobId = jobIdOf(page.url());
  const timeline = await fetch(`${API}/jobs/${jobId}/timeline`, { headers: { Authorization: `Bearer ${bearer}` } });
  const section = page.locator('#timeline');
  if (timeline.status === 200) {
    const kinds = (await timeline.json()).map((e) => e.kind);
    await page.locator('[data-testid="timeline-entry"][data-kind="winner.elected"]').waitFor();
    assert.ok(await section.isVisible());
    const shown = await page.getByTestId('timeline-entry').evaluateAll((items) => items.map((li) => li.dataset.kind));
    // The page read the timeline when the job completed; events recorded later may follow.
    assert.deepEqual(shown, kinds.slice(0, shown.length), "the page shows the API's events, in order");
  } else {
    assert.equal(timeline.status, 404);
    assert.equal(await section.isVisible(), false, 'no timeline section without the endpoint');
  }

  const dir = path.join(REPO_ROOT, 'docs', 'screenshots');
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: path.join(dir, 'completed-job.png'), fullPage: true });
  assertNoPageErrors(page);
});
