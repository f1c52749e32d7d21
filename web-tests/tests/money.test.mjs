// Money and limits in the page, only from what the API returns: an attempt's reservation while its
// call is under way and its cost once settled, the job's total; a start refused by a spent money
// budget, in words with its figures; and the console's "Budgets and limits" (an owner's budgets with
// spent, reserved and remaining and a bar, their share of the workers, the prices), read and set.
// A provider's limits and usage, and a budget's provider, are drawn when GET /admin/providers and
// GET /admin/budgets carry them and not otherwise (the API may not have them yet: the test adds them
// to the real answers on their way to the page).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  API,
  apiGet,
  apiSend,
  assertNoPageErrors,
  browserForThisFile,
  eventually,
  jobIdOf,
  jobsWithPrompt,
  micros,
  newPage,
  scriptProvider,
  setPrice,
  signIn,
  submitPrompt,
  token,
  unique,
  usdText,
  waitForJobState,
} from './support.mjs';

const browser = browserForThisFile();

async function operatorPage() {
  const sub = unique('web-money-otto');
  const bearer = token(sub, 'operator');
  const page = await newPage(browser);
  await signIn(page, bearer);
  await page.getByTestId('console-budgets').waitFor({ state: 'visible' });
  return { page, sub, bearer };
}

async function setBudget(owner, period, limitUsd, softPercent, bearer) {
  const r = await apiSend('PUT', `/admin/budgets/${encodeURIComponent(owner)}/${period}`, { limitUsd, softPercent, reason: 'web test budget' }, bearer);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body;
}

/** The owner's budgets and share, shown in the console's budgets section. */
async function showOwner(page, owner) {
  await page.getByTestId('budgets-owner').fill(owner);
  await page.getByTestId('budgets-show').click();
  await page.locator('[data-testid="budgets-owner-name"]', { hasText: owner }).waitFor();
}

/**
 * What a budget row shows, as the API's figures: `{limit, spent, reserved, remaining}` in millionths,
 * each cell's text checked to be its amount written as money. Read at once: the row may be redrawn.
 */
async function rowFigures(row) {
  const cells = await row.evaluate((tr) =>
    ['limit', 'spent', 'reserved', 'remaining'].map((name) => {
      const cell = tr.querySelector(`[data-testid="budget-${name}"]`);
      return [name, cell.dataset.usd, cell.textContent];
    }),
  );
  const figures = {};
  for (const [name, amount, text] of cells) {
    assert.equal(text, usdText(amount), `the ${name} is written as money`);
    figures[name] = micros(amount);
  }
  return figures;
}

function apiFigures(budget) {
  return {
    limit: micros(budget.limitUsd),
    spent: micros(budget.spentUsd),
    reserved: micros(budget.reservedUsd),
    remaining: micros(budget.remainingUsd),
  };
}

test('a call under way shows what it reserved, its settled cost replaces it, and the console follows the budget', async () => {
  const price = await setPrice('fake-a', 2, 4);
  const { page: ops, bearer: operator } = await operatorPage();
  const owner = unique('web-spender');
  await setBudget(owner, 'day', 1, 50, operator);

  // No usage reported: the attempt is held in quarantine and keeps its reservation until resolved.
  const prompt = `fix the off-by-one in last_index (${unique('reserved')})`;
  await scriptProvider(prompt, [{ omitUsage: true }]);
  const bearer = token(owner);
  const page = await newPage(browser);
  await signIn(page, bearer);
  await submitPrompt(page, prompt);
  await page.waitForURL(/#\/jobs\//);
  const jobId = jobIdOf(page.url());
  await eventually(async () => (await apiGet(`/jobs/${jobId}`, bearer)).attempts[0]?.quarantined, 'attempt quarantined', 30_000);
  const held = (await apiGet(`/jobs/${jobId}`, bearer)).attempts[0];
  assert.ok(held.reservedUsd > 0, 'the claim reserved money in the budget');
  assert.equal(held.costUsd, null);

  const cost = page.locator('[data-testid="attempt-cost"][data-reserved-usd]');
  await cost.waitFor();
  assert.equal(micros(await cost.getAttribute('data-reserved-usd')), micros(held.reservedUsd));
  assert.equal(await cost.innerText(), `up to ${usdText(held.reservedUsd)} reserved`);
  const total = page.getByTestId('job-cost');
  assert.equal(await total.innerText(), `up to ${usdText(held.reservedUsd)} reserved by the call under way`);

  // The console: limit, spent, reserved and remaining as GET /admin/budgets/{owner} says.
  await showOwner(ops, owner);
  const row = ops.locator('[data-testid="budget-row"][data-period="day"]');
  await row.waitFor();
  let budget = (await apiGet(`/admin/budgets/${encodeURIComponent(owner)}`, operator)).budgets.find((b) => b.period === 'day');
  assert.equal(micros(budget.reservedUsd), micros(held.reservedUsd));
  assert.deepEqual(await rowFigures(row), apiFigures(budget));
  assert.equal(await row.getByTestId('budget-provider').innerText(), 'all providers');
  assert.equal(await row.getByTestId('budget-origin').innerText(), 'set for this owner');
  assert.match(await row.getByTestId('budget-soft').innerText(), /^50%/);
  const bar = row.getByTestId('budget-bar');
  assert.equal(Number(await bar.getAttribute('data-percent')), Math.round((micros(budget.reservedUsd) / 1e6) * 100));
  assert.match(await bar.getAttribute('aria-label'), /reserved/);
  assert.equal(await ops.locator('[data-testid="budget-row"]').count(), 1, 'one budget: no month budget applies');

  // The share: never set, so weight 1 and the workers' default.
  assert.match(await ops.getByTestId('share-weight').innerText(), /^1 /);
  assert.equal(await ops.getByTestId('share-max-in-flight').innerText(), "the workers' default");

  // The prices in force, as GET /admin/prices lists them.
  const priceRow = ops.locator('[data-testid="price-row"][data-provider="fake-a"]');
  assert.equal(micros(await priceRow.getByTestId('price-input-usd').getAttribute('data-usd')), micros(price.inputUsdPerMillionTokens));
  assert.equal(micros(await priceRow.getByTestId('price-output-usd').getAttribute('data-usd')), micros(price.outputUsdPerMillionTokens));

  // The operator settles the held attempt with the provider's figures: the cost replaces the reservation.
  const resolved = await apiSend('POST', `/admin/attempts/${held.id}/resolve`, { usage: { promptTokens: 12, completionTokens: 40 }, reason: 'web test invoice' }, operator);
  assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
  await waitForJobState(page, 'completed', 60_000);
  const charged = (await apiGet(`/jobs/${jobId}`, bearer)).attempts[0];
  assert.equal(micros(charged.costUsd), 12 * 2 + 40 * 4, '12 prompt and 40 completion tokens at $2 and $4 per million');
  const settled = page.locator('[data-testid="attempt-cost"][data-usd]');
  await settled.waitFor();
  assert.equal(await settled.innerText(), usdText(charged.costUsd));
  assert.equal(await page.getByTestId('job-cost').innerText(), `${usdText(charged.costUsd)} for 1 attempt`);

  await ops.getByTestId('budgets-refresh').click();
  await eventually(async () => (await rowFigures(row)).reserved === 0, 'the reservation released in the console');
  budget = (await apiGet(`/admin/budgets/${encodeURIComponent(owner)}`, operator)).budgets.find((b) => b.period === 'day');
  assert.deepEqual(await rowFigures(row), apiFigures(budget));
  assert.equal(micros(budget.spentUsd), micros(charged.costUsd));
  assert.equal(micros(budget.remainingUsd), 1_000_000 - micros(charged.costUsd));
  assertNoPageErrors(page);
  assertNoPageErrors(ops);
});

test('a start refused by a spent money budget is explained with its figures, and no job is made', async () => {
  const operator = token(unique('web-money-otto'), 'operator');
  const owner = unique('web-broke');
  await setBudget(owner, 'day', 0, 80, operator);
  const bearer = token(owner);
  const page = await newPage(browser);
  await signIn(page, bearer);
  const prompt = unique('over budget');
  await page.getByTestId('prompt').fill(prompt);
  const answered = page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/jobs');
  await page.getByTestId('submit').click();
  const response = await answered;
  assert.equal(response.status(), 429);
  const body = await response.json();

  const problem = page.locator('#submit-problem [data-testid="problem"]');
  await problem.waitFor();
  assert.equal(await problem.getByTestId('problem-code').innerText(), '(spend-budget-exceeded)');
  assert.equal(
    await problem.getByTestId('problem-message').innerText(),
    `The day budget of ${usdText(body.limitUsd)} (from ${body.periodStartsOn}) is used up: ` +
      `${usdText(body.spentUsd)} spent and ${usdText(body.reservedUsd)} reserved by calls under way. ` +
      'Nothing new starts until calls under way settle for less than they reserved, an operator raises the budget, ' +
      'or the next day begins.',
  );
  assert.equal((await jobsWithPrompt(bearer, prompt)).length, 0, 'no job was made');
  assertNoPageErrors(page);
});

test('an operator sets a budget, a share and a price from the console, each with a required reason', async () => {
  const { page, sub, bearer } = await operatorPage();
  const owner = unique('web-budgeted');
  await showOwner(page, owner);
  await page.getByTestId('budgets-empty').waitFor();

  const puts = [];
  page.on('request', (r) => {
    if (r.method() === 'PUT') puts.push(`${new URL(r.url()).pathname} ${r.postData()}`);
  });
  await page.getByTestId('budget-period').selectOption('month');
  await page.getByTestId('budget-limit').fill('25.5');
  await page.getByTestId('budget-soft').fill('90');
  await page.getByTestId('budget-set').click();
  assert.equal(puts.length, 0, 'no reason: nothing sent');
  await page.getByTestId('budget-reason').fill('quarterly plan');
  await page.getByTestId('budget-set').click();
  const row = page.locator('[data-testid="budget-row"][data-period="month"]');
  await row.waitFor();
  assert.deepEqual(await rowFigures(row), { limit: 25_500_000, spent: 0, reserved: 0, remaining: 25_500_000 });
  assert.match(await row.getByTestId('budget-soft').innerText(), /^90%/);
  const [month] = (await apiGet(`/admin/budgets/${encodeURIComponent(owner)}`, bearer)).budgets.filter((b) => b.period === 'month');
  assert.equal(micros(month.limitUsd), 25_500_000);

  await page.getByTestId('share-weight-input').fill('3');
  await page.getByTestId('share-max-input').fill('4');
  await page.getByTestId('share-reason').fill('bigger team');
  await page.getByTestId('share-set-button').click();
  await eventually(async () => (await page.getByTestId('share-max-in-flight').innerText()) === '4', 'share drawn');
  assert.match(await page.getByTestId('share-set').innerText(), new RegExp(`^by ${sub} at .*: bigger team$`));
  const share = await apiGet(`/admin/owners/${encodeURIComponent(owner)}/share`, bearer);
  assert.deepEqual([share.weight, share.maxInFlight, share.setBy], [3, 4, sub]);

  await page.getByTestId('price-provider').selectOption('fake-b');
  await page.getByTestId('price-model').fill('fake-b');
  await page.getByTestId('price-input').fill('1.5');
  await page.getByTestId('price-output').fill('6');
  await page.getByTestId('price-reason').fill('new rate card');
  await page.getByTestId('price-set').click();
  const priceRow = page.locator('[data-testid="price-row"][data-provider="fake-b"]', { hasText: 'new rate card' });
  await priceRow.waitFor();
  assert.equal(await priceRow.getByTestId('price-input-usd').innerText(), '$1.50');
  assert.equal(await priceRow.getByTestId('price-output-usd').innerText(), '$6.00');

  assert.deepEqual(
    puts.map((p) => p.split(' ')[0]),
    [`/admin/budgets/${owner}/month`, `/admin/owners/${owner}/share`, '/admin/prices/fake-b'],
  );
  const audit = await apiGet('/admin/audit?limit=50', bearer);
  for (const action of ['budget.set', 'owner-share.set', 'price.set']) {
    assert.ok(audit.some((e) => e.actor === sub && e.action === action), `${action} is audited`);
  }
  assertNoPageErrors(page);
});

test("a provider's limits and usage, its breaker's probes, and a budget's provider, are drawn when the API gives them and not otherwise", async () => {
  const { page, bearer } = await operatorPage();
  const owner = unique('web-limited');
  await setBudget(owner, 'day', 5, 80, bearer);

  // As the API answers here: no provider has a limit (dev/config), so only its calls in flight.
  await page.locator('[data-testid="provider-row"][data-provider="fake-a"]').waitFor();
  const plain = await apiGet('/admin/providers', bearer);
  const anthropic = plain.find((p) => p.name === 'fake-anthropic');
  assert.equal(anthropic.limits.requestsPerMinute, null);
  assert.equal(
    await page.locator('[data-testid="provider-row"][data-provider="fake-anthropic"] [data-testid="provider-limits"]').innerText(),
    `${anthropic.usage.inFlight} in flight`,
  );

  // Limits set (null: no limit), and a provider whose answer carries neither.
  await page.route('**/admin/providers', async (route) => {
    const response = await route.fetch();
    const providers = await response.json();
    for (const p of providers) {
      if (p.name === 'fake-a') {
        p.limits = { maxInFlight: 8, requestsPerMinute: 60, tokensPerMinute: 100000 };
        p.usage = { inFlight: 3, requestsThisMinute: 41, tokensThisMinute: 9000 };
      } else if (p.name === 'fake-b') {
        p.limits = { maxInFlight: null, requestsPerMinute: null, tokensPerMinute: 2500 };
        p.usage = { inFlight: 2, requestsThisMinute: 7, tokensThisMinute: 1200 };
      } else {
        delete p.limits;
        delete p.usage;
        // A half-open breaker: two probes counted, one of them a fault, three under way.
        p.health = { ...p.health, breaker: 'half_open', open: false, probeCalls: 2, probeFaults: 1, probesUnderWay: 3 };
      }
    }
    await route.fulfill({ response, json: providers });
  });
  await page.route(`**/admin/budgets/${owner}`, async (route) => {
    const response = await route.fetch();
    const body = await response.json();
    body.budgets = body.budgets.map((b) => ({ ...b, provider: 'fake-b' }));
    await route.fulfill({ response, json: body });
  });
  await page.locator('#providers-refresh').click();
  const limits = (name) => page.locator(`[data-testid="provider-row"][data-provider="${name}"] [data-testid="provider-limits"]`);
  // The rows were drawn from the plain answer already: wait for the refreshed ones.
  await limits('fake-a').filter({ hasText: 'rpm' }).waitFor();
  assert.equal(await limits('fake-a').innerText(), '3/8 in flight · 41/60 rpm · 9k/100k tpm');
  assert.equal(await limits('fake-b').innerText(), '2 in flight · 1.2k/2.5k tpm');
  assert.equal(await limits('fake-anthropic').count(), 0, 'nothing drawn for a provider without them');
  assert.equal(
    await page.locator('[data-testid="provider-row"][data-provider="fake-anthropic"] [data-testid="provider-gate"]').innerText(),
    'breaker half open, probes: 2 counted (1 faults), 3 under way',
  );

  await showOwner(page, owner);
  const row = page.locator('[data-testid="budget-row"][data-period="day"]');
  await row.waitFor();
  assert.equal(await row.getByTestId('budget-provider').innerText(), 'fake-b');
  assertNoPageErrors(page);
});
