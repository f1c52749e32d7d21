// An open job is followed through its event stream (GET /jobs/{id}/events), not by polling: while
// the provider works and nothing happens, the page sends no request at all; each event brings one
// read of the job, and the stream's end the final state. When the stream is refused, the page
// falls back to reading the job every second and still shows the end.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  assertNoPageErrors,
  browserForThisFile,
  newPage,
  scriptProvider,
  signIn,
  submitPrompt,
  token,
  unique,
  waitForJobState,
} from './support.mjs';

const browser = browserForThisFile();

/** Every request the page sends for a job (reads, timeline, output), its stream apart. */
function recordJobReads(page) {
  const reads = [];
  page.on('request', (request) => {
    const pathname = new URL(request.url()).pathname;
    if (request.method() === 'GET' && pathname.startsWith('/jobs/') && !pathname.endsWith('/events')) {
      reads.push({ pathname, at: Date.now() });
    }
  });
  return reads;
}

test('a running job is shown live from its stream, with no polling request', async () => {
  const bearer = token(unique('web-stream'));
  const prompt = unique('slow provider stream');
  // Under the 5 s read timeout bin/dev gives the worker, so the attempt succeeds.
  await scriptProvider(prompt, [{ delayMs: 4000 }]);

  const page = await newPage(browser);
  const streams = [];
  page.on('request', (request) => {
    if (new URL(request.url()).pathname.endsWith('/events')) streams.push(request.url());
  });
  const reads = recordJobReads(page);
  await signIn(page, bearer);
  await submitPrompt(page, prompt);
  await waitForJobState(page, 'running');
  assert.equal(await page.getByTestId('job-polling').innerText(), 'Live.');

  // The provider holds the call for 4 s: nothing happens to the job meanwhile, so nothing is asked.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const quietFrom = Date.now();
  await new Promise((resolve) => setTimeout(resolve, 2500));
  const readsWhileQuiet = reads.filter((read) => read.at >= quietFrom);
  assert.deepEqual(readsWhileQuiet, [], 'no request while the stream is open and nothing happens');

  await waitForJobState(page, 'completed', 30_000);
  assert.equal(await page.getByTestId('job-polling').innerText(), '');
  assert.equal(streams.length, 1, 'one stream followed the job to its end');
  assertNoPageErrors(page);
});

test('a refused stream falls back to reading the job every second', async () => {
  const bearer = token(unique('web-stream-refused'));
  const prompt = unique('slow provider no stream');
  await scriptProvider(prompt, [{ delayMs: 3000 }]);

  const page = await newPage(browser);
  await page.route('**/jobs/*/events', (route) =>
    route.fulfill({ status: 503, contentType: 'application/problem+json', body: '{"status":503}' }),
  );
  const reads = recordJobReads(page);
  await signIn(page, bearer);
  await submitPrompt(page, prompt);
  await waitForJobState(page, 'completed', 30_000);
  assert.ok(reads.length >= 3, `the page kept reading the job (${reads.length} reads)`);
  assertNoPageErrors(page);
});
