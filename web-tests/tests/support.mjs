// Shared pieces of the browser tests: Debian's Chromium through playwright-core, tokens from
// bin/jobctl, the fake provider's scripting API, and small waits on the page's data-testids.
// Each test signs in as its own subject (unique per run), so the jobs it counts are its own.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const API = (process.env.JOBAPI_URL || 'http://127.0.0.1:8080').replace(/\/$/, '');
export const FAKE = (process.env.FAKE_PROVIDER_URL || 'http://127.0.0.1:8090').replace(/\/$/, '');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const RUN = `${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
let counter = 0;

/** A name no earlier run and no other test used: for subjects, prompts and fake-provider matches. */
export function unique(label) {
  counter += 1;
  return `${label}-${RUN}-${counter}`;
}

/** A development token from `bin/jobctl token` (run from the repository root). */
export function token(sub, groups) {
  const args = ['token', '--sub', sub];
  if (groups) args.push('--groups', groups);
  return execFileSync(path.join(REPO_ROOT, 'bin', 'jobctl'), args, { cwd: REPO_ROOT, encoding: 'utf8' }).trim();
}

/** The API called directly (Node's fetch), to check what the page did. */
export async function apiGet(pathname, bearer) {
  const response = await fetch(API + pathname, { headers: { Authorization: `Bearer ${bearer}` } });
  const body = await response.json();
  assert.equal(response.status, 200, `GET ${pathname}: ${JSON.stringify(body)}`);
  return body;
}

/** The caller's jobs whose prompt is exactly `prompt`. */
export async function jobsWithPrompt(bearer, prompt) {
  const page = await apiGet('/jobs?limit=100', bearer);
  return page.items.filter((job) => job.input && job.input.prompt === prompt);
}

/** Scripts the fake provider: requests whose prompt contains `match` take these steps. */
export async function scriptProvider(match, steps) {
  const response = await fetch(`${FAKE}/fake/scripts`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ match, steps }),
  });
  assert.ok(response.ok, `POST /fake/scripts answered ${response.status}: ${await response.text()}`);
}

/** One Chromium with a fresh profile for a test file; close() removes the profile. */
export async function startBrowser() {
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'jobapi-web-tests-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 900 },
  });
  context.setDefaultTimeout(20_000);
  return {
    context,
    async close() {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The test file's one browser: started before its first test and closed after its last. Pass it
 * to `newPage`; it is there once the first test runs.
 */
export function browserForThisFile() {
  let started;
  before(async () => {
    started = await startBrowser();
  });
  after(async () => {
    await started?.close();
  });
  return {
    get context() {
      return started.context;
    },
  };
}

/** Types the prompt into the job form and submits it. */
export async function submitPrompt(page, prompt) {
  await page.getByTestId('prompt').fill(prompt);
  await page.getByTestId('submit').click();
}

/**
 * A new tab (its own sessionStorage) that records uncaught page errors; call
 * `assertNoPageErrors(page)` at the end of a test.
 */
export async function newPage(browser) {
  const page = await browser.context.newPage();
  page.errors = [];
  page.on('pageerror', (error) => page.errors.push(String(error)));
  return page;
}

export function assertNoPageErrors(page) {
  assert.deepEqual(page.errors, [], 'uncaught errors on the page');
}

/** Opens the page (optionally at a hash route) and signs in with the token through the form. */
export async function signIn(page, bearer, hash = '') {
  if (!page.url().startsWith(API)) await page.goto(`${API}/${hash}`);
  await page.getByTestId('token-input').fill(bearer);
  await page.getByTestId('sign-in').click();
  await page.locator('#app').waitFor({ state: 'visible' });
}

/** Every POST the page sends to `pathname`, with the response when it arrives. */
export function recordPosts(page, pathname) {
  const posts = [];
  page.on('request', (request) => {
    if (request.method() === 'POST' && new URL(request.url()).pathname === pathname) {
      posts.push({ request, response: request.response() });
    }
  });
  return posts;
}

/** Waits until the job panel shows `state` (the badge's data-state). */
export async function waitForJobState(page, state, timeout = 30_000) {
  await page.locator(`[data-testid="job-state"][data-state="${state}"]`).waitFor({ timeout });
}

/** The data-testids of the action buttons visible now, sorted. */
export async function visibleActions(page) {
  const ids = await page
    .getByTestId('job-actions')
    .locator('button:visible')
    .evaluateAll((buttons) => buttons.map((b) => b.dataset.testid));
  return ids.sort();
}

/** The job id in the page's URL (#/jobs/{id}). */
export function jobIdOf(url) {
  const match = /#\/jobs\/([0-9a-f-]{36})$/.exec(url);
  assert.ok(match, `URL ${url} names no job`);
  return match[1];
}

/** Resolves when `predicate()` is true (polled), or fails with `message`. */
export async function eventually(predicate, message, timeout = 20_000) {
  const deadline = Date.now() + timeout;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > deadline) assert.fail(`timed out after ${timeout} ms: ${message}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The API called directly with a JSON body and any method: `{status, body}`. */
export async function apiSend(method, pathname, json, bearer) {
  const response = await fetch(API + pathname, {
    method,
    headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(json),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

/**
 * A new price version for a fake provider's model (its model is its name), in US dollars per
 * million tokens, set by an operator: attempts claimed from now on are charged at it.
 */
export async function setPrice(provider, input, output) {
  const operator = token(unique('web-pricer'), 'operator');
  const r = await apiSend(
    'PUT',
    `/admin/prices/${provider}`,
    { model: provider, inputUsdPerMillionTokens: input, outputUsdPerMillionTokens: output, reason: 'web test prices' },
    operator,
  );
  assert.equal(r.status, 200, `PUT /admin/prices/${provider}: ${JSON.stringify(r.body)}`);
  return r.body;
}

/** US dollars as the page writes them (dom.js `usd`): cents always, up to 6 decimals. */
export function usdText(amount) {
  return new Intl.NumberFormat('en-US', {
    style: 'currency',
    currency: 'USD',
    minimumFractionDigits: 2,
    maximumFractionDigits: 6,
  }).format(Number(amount));
}

/** Whole millionths of a dollar, to compare amounts exactly. */
export function micros(amount) {
  return Math.round(Number(amount) * 1e6);
}
