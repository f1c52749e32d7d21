// Problem responses are shown in words a person understands, with their code.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  API,
  assertNoPageErrors,
  browserForThisFile,
  jobsWithPrompt,
  newPage,
  recordPosts,
  signIn,
  token,
  unique,
} from './support.mjs';

const browser = browserForThisFile();

test('an unknown provider is explained in words, with the code unknown-provider', async () => {
  const bearer = token(unique('web-problem'));
  const page = await newPage(browser);
  await signIn(page, bearer);
  const prompt = unique('unknown provider');
  await page.getByTestId('prompt').fill(prompt);
  // The select offers only known providers; add one the server does not know.
  await page.getByTestId('provider').evaluate((select) => {
    select.append(new Option('no-such-provider', 'no-such-provider'));
    select.value = 'no-such-provider';
  });
  const posts = recordPosts(page, '/jobs');
  await page.getByTestId('submit').click();

  const problem = page.locator('#submit-problem [data-testid="problem"]');
  await problem.waitFor();
  assert.equal((await posts[0].response).status(), 422);
  assert.equal(await problem.getAttribute('role'), 'alert');
  assert.equal(
    await problem.getByTestId('problem-message').innerText(),
    'That provider is not available here. Choose one from the list.',
  );
  assert.equal(await problem.getByTestId('problem-code').innerText(), '(unknown-provider)');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('jobapi.pending.job')), null, 'a refused draft is settled');
  assert.equal((await jobsWithPrompt(bearer, prompt)).length, 0, 'no job was made');
  assert.equal(page.url(), `${API}/`, 'the page stays on the form');
  assertNoPageErrors(page);
});

test('a token the server refuses sends the person back to sign-in, in words', async () => {
  const page = await newPage(browser);
  // Well-formed, but its signature is not the development key's.
  const good = token(unique('web-expired'));
  const forged = `${good.slice(0, good.lastIndexOf('.'))}.${'A'.repeat(43)}`;
  await page.goto(`${API}/`);
  await page.getByTestId('token-input').fill(forged);
  await page.getByTestId('sign-in').click();

  const problem = page.locator('#signin-problem [data-testid="problem"]');
  await problem.waitFor();
  assert.equal(
    await problem.getByTestId('problem-message').innerText(),
    'Your token is missing or expired; paste a new one.',
  );
  assert.equal(await problem.getByTestId('problem-code').innerText(), '(unauthenticated)');
  assert.ok(await page.getByTestId('token-input').isVisible(), 'the sign-in form is back');
  assert.equal(await page.evaluate(() => sessionStorage.getItem('jobapi.token')), null);
  assertNoPageErrors(page);
});
