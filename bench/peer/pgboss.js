// bench/run's peer row: pg-boss 10 on the same PostgreSQL, in a schema of its own.
//
//   node bench/peer/pgboss.js send [--concurrency 16] [--warmup 5] [--duration 15]
//   node bench/peer/pgboss.js work [--workers 16] [--batch-size 100]
//
// Connects with the PG* environment variables (bench/run exports them). Prints one result line, in
// the load generator's format (space-separated key=value, times in ms):
//   send  makes the schema afresh, then deduplicated sends in a closed loop: --concurrency callers,
//         each sending its next job when the last one was stored, counted in the --duration window
//         after the --warmup; then checks that repeating a key stores nothing.
//   work  drains every job send stored with --workers work() loops fetching --batch-size jobs at a
//         time, each batch completed by pg-boss when the handler returns; from the first fetch to
//         the last completed_on, as the database recorded them.
// Exit status 1 when a measurement fails or the deduplication does not hold, 2 for a usage error.
import { createHash } from 'node:crypto'
import pg from 'pg'
import PgBoss from 'pg-boss'

const SCHEMA = 'pgboss_bench'
const QUEUE = 'bench-jobs'
// The input of Scenario.JOB_BODY, what POST /jobs stores.
const JOB_DATA = { prompt: 'bench: fix the off-by-one', repository: 'demo', baseRef: 'main' }
// pg-boss's own floor for pollingIntervalSeconds.
const POLLING_INTERVAL_SECONDS = 0.5
// Sends repeated after the send step to check that a repeated key stores nothing.
const DEDUPLICATION_PROBES = 100

function parseArgs (argv) {
  const options = { command: argv[0], concurrency: 16, warmup: 5, duration: 15, workers: 16, batchSize: 100 }
  if (options.command !== 'send' && options.command !== 'work') {
    usage(`unknown command: ${options.command ?? '(none)'}`)
  }
  const names = { '--concurrency': 'concurrency', '--warmup': 'warmup', '--duration': 'duration', '--workers': 'workers', '--batch-size': 'batchSize' }
  for (let i = 1; i < argv.length; i += 2) {
    const name = names[argv[i]]
    const value = Number(argv[i + 1])
    if (!name || !Number.isFinite(value) || value < 0) {
      usage(`bad option: ${argv[i]} ${argv[i + 1] ?? ''}`)
    }
    options[name] = value
  }
  if (options.concurrency < 1 || options.duration <= 0 || options.workers < 1 || options.batchSize < 1) {
    usage('--concurrency, --duration, --workers and --batch-size must be positive')
  }
  return options
}

function usage (message) {
  console.error(message)
  console.error('usage: node bench/peer/pgboss.js send [--concurrency N] [--warmup S] [--duration S]')
  console.error('       node bench/peer/pgboss.js work [--workers N] [--batch-size N]')
  process.exit(2)
}

// pg-boss 10 deduplicates forever only by the job's id: the insert is ON CONFLICT DO NOTHING on
// the primary key (name, id) and send() answers null for a repeat. Its singletonKey deduplicates
// only while a job is queued or active (the short, singleton and stately policies) or within
// singletonSeconds, which is throttling, not idempotency. So the key becomes the id, as a
// name-based UUID (RFC 4122 version 5 layout over SHA-256 of owner and key).
function idOf (owner, key) {
  const hash = createHash('sha256').update(`${owner}\n${key}`).digest()
  hash[6] = (hash[6] & 0x0f) | 0x50
  hash[8] = (hash[8] & 0x3f) | 0x80
  const hex = hash.subarray(0, 16).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

function percentile (sorted, p) {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

function resultLine (label, { concurrency, requests, errors, seconds, latencies }) {
  const sorted = Float64Array.from(latencies).sort()
  // The work step times the whole drain, not each job: no latencies to report.
  const ms = (value) => (sorted.length ? value.toFixed(2) : '-')
  return [
    'result', `label=${label}`, 'mode=closed', `concurrency=${concurrency}`, `requests=${requests}`,
    `errors=${errors}`, `seconds=${seconds.toFixed(2)}`, `throughput=${(requests / seconds).toFixed(1)}`,
    `p50_ms=${ms(percentile(sorted, 50))}`, `p99_ms=${ms(percentile(sorted, 99))}`,
    `p999_ms=${ms(percentile(sorted, 99.9))}`, `max_ms=${ms(sorted.length ? sorted[sorted.length - 1] : 0)}`
  ].join(' ')
}

async function measureSends (boss, options, owner) {
  const start = performance.now()
  const windowStart = start + options.warmup * 1000
  const windowEnd = windowStart + options.duration * 1000
  const latencies = []
  let sequence = 0
  let errors = 0
  const caller = async () => {
    for (let now = performance.now(); now < windowEnd; now = performance.now()) {
      const key = `key-${sequence++}`
      try {
        const id = await boss.send(QUEUE, JOB_DATA, { id: idOf(owner, key) })
        if (id === null) throw new Error(`send of the fresh key ${key} stored nothing`)
        if (now >= windowStart) latencies.push(performance.now() - now)
      } catch (error) {
        if (now >= windowStart) errors++
        console.error(`send: ${error.message}`)
      }
    }
  }
  await Promise.all(Array.from({ length: options.concurrency }, caller))
  return { sent: sequence, measurement: { concurrency: options.concurrency, requests: latencies.length, errors, seconds: options.duration, latencies } }
}

async function checkDeduplication (boss, owner, sent) {
  const probes = Math.min(DEDUPLICATION_PROBES, sent)
  for (let i = 0; i < probes; i++) {
    const id = await boss.send(QUEUE, JOB_DATA, { id: idOf(owner, `key-${i}`) })
    if (id !== null) throw new Error(`a repeated send of key-${i} stored job ${id}`)
  }
}

async function count (client, state) {
  const { rows } = await client.query(`SELECT count(*)::int AS n FROM ${SCHEMA}.job WHERE name = $1 AND state = $2`, [QUEUE, state])
  return rows[0].n
}

async function measureWork (boss, client, options, jobs) {
  const { rows: [{ started }] } = await client.query('SELECT now() AS started')
  for (let i = 0; i < options.workers; i++) {
    await boss.work(QUEUE, { batchSize: options.batchSize, pollingIntervalSeconds: POLLING_INTERVAL_SECONDS }, async () => {})
  }
  const deadline = Date.now() + Math.max(60_000, jobs * 10)
  while (await count(client, 'completed') < jobs && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await boss.offWork(QUEUE)
  const completed = await count(client, 'completed')
  const { rows: [{ seconds }] } = await client.query(
    `SELECT extract(epoch FROM max(completed_on) - $2::timestamptz)::float AS seconds FROM ${SCHEMA}.job WHERE name = $1`,
    [QUEUE, started])
  return { concurrency: options.workers, requests: completed, errors: jobs - completed, seconds: seconds ?? 0, latencies: [] }
}

async function send (boss, options) {
  const owner = `bench-${process.pid}-${Date.now()}`
  const { sent, measurement } = await measureSends(boss, options, owner)
  console.log(resultLine(`pgboss-send-c${options.concurrency}`, measurement))
  await checkDeduplication(boss, owner, sent)
  return measurement.requests > 0 && measurement.errors === 0
}

async function work (boss, client, options) {
  const jobs = await count(client, 'created')
  const measurement = await measureWork(boss, client, options, jobs)
  console.log(resultLine(`pgboss-work-w${options.workers}-b${options.batchSize}`, measurement))
  return measurement.requests > 0 && measurement.errors === 0
}

async function main () {
  const options = parseArgs(process.argv.slice(2))
  const client = new pg.Client()
  await client.connect()
  if (options.command === 'send') {
    // Afresh each run, like the rest of bench/run's database; pg-boss makes its tables on start().
    await client.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`)
  }
  // One connection per caller or worker, as the api's pool gives one per request in flight; no
  // maintenance or cron loops competing with the measurement.
  const connections = options.command === 'send' ? options.concurrency : options.workers
  const boss = new PgBoss({ schema: SCHEMA, max: connections, supervise: false, schedule: false })
  boss.on('error', (error) => console.error(`pg-boss: ${error.message}`))
  let ok = false
  try {
    await boss.start()
    if (options.command === 'send') {
      await boss.createQueue(QUEUE)
      ok = await send(boss, options)
    } else {
      ok = await work(boss, client, options)
    }
  } catch (error) {
    console.error(error.message)
  } finally {
    await boss.stop({ graceful: false, wait: true })
    await client.end()
  }
  process.exit(ok ? 0 : 1)
}

main()
