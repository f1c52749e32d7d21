package dev.jobapi.chaos;

import static dev.jobapi.chaos.ClientLedger.Count;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The client load: one session per job, as a user and a flaky network would drive it. Submits (sometimes
 * twice at once), reloads (replays the key after dropping the answer), retries the same key on the other
 * api process when an answer is lost or a 5xx, asks for fallbacks, lets a reviewer supersede, cancels.
 * Every choice comes from the seed; every 2xx lands in the {@link ClientLedger}.
 *
 * <p>The load is open: sessions start on schedule ({@code jobs} spread over the window) whatever the system's
 * pace, on a pool sized for the rate, and following a job runs on a second pool, so slow jobs delay the
 * following, never the submitting. One owner, {@code erin}, sends large inputs close to the bound (and now and
 * then over it, which must be refused with 400/413) and lists her jobs.
 */
final class Load {

    static final List<String> OWNERS = List.of("alice", "bob", "carol", "dave");
    /** The fifth owner: every one of her jobs carries a large input. */
    static final String LARGE_INPUT_OWNER = "erin";

    static final String REVIEWER = "rita";
    private static final Duration RETRY_BUDGET = Duration.ofSeconds(90);
    private static final Duration SESSION_LENGTH = Duration.ofSeconds(45);
    /** The api's bound on a job's input (512 KiB as canonical JSON): erin's inputs go close to it. */
    static final int INPUT_BOUND = 524_288;
    /** Share of the sessions that are erin's (per cent), and of hers that go over the bound. */
    private static final int LARGE_INPUT_PERCENT = 2;

    private static final int OVERSIZED_PERCENT = 20;
    /** Share of the jobs (per cent) whose baseRef names no branch of the target repository. */
    private static final int MISSING_BASE_REF_PERCENT = 2;
    /** A session that starts this late behind its schedule counts as late (the client could not keep up). */
    private static final Duration LATE = Duration.ofSeconds(1);

    private final Api api;
    private final ClientLedger ledger;
    private final long seed;
    private final URI fake;
    private final long readTimeoutMs;
    private final Map<String, String> tokens;
    private final HttpClient http = HttpClient.newHttpClient();
    private ExecutorService sessions;
    private ExecutorService follows;
    // The second request of a double submit runs here, so it really overlaps the first.
    private final ExecutorService doubles = Executors.newCachedThreadPool();
    private final Map<ProviderFault, AtomicLong> scripted = new EnumMap<>(ProviderFault.class);
    private final Set<String> refusedKeys = ConcurrentHashMap.newKeySet();
    private final AtomicLong lateStarts = new AtomicLong();
    private final AtomicLong maxLatenessMs = new AtomicLong();
    private final AtomicLong lastSubmitNanos = new AtomicLong();
    private final AtomicLong lastAcknowledgedNanos = new AtomicLong();
    private final AtomicReference<Long> startNanos = new AtomicReference<>();

    Load(Api api, ClientLedger ledger, DevTokens tokens, long seed, URI fake, long readTimeoutMs) {
        this.api = api;
        this.ledger = ledger;
        this.seed = seed;
        this.fake = fake;
        this.readTimeoutMs = readTimeoutMs;
        this.tokens = new HashMap<>();
        for (String owner : OWNERS) {
            this.tokens.put(owner, tokens.mint(owner, List.of("user")));
        }
        this.tokens.put(LARGE_INPUT_OWNER, tokens.mint(LARGE_INPUT_OWNER, List.of("user")));
        this.tokens.put(REVIEWER, tokens.mint(REVIEWER, List.of("user", "reviewer")));
        for (ProviderFault fault : ProviderFault.values()) {
            scripted.put(fault, new AtomicLong());
        }
    }

    /** Starts {@code jobs} sessions spread evenly over {@code window}; returns when the last one has started. */
    void run(Duration window, int jobs) throws InterruptedException {
        double rate = jobs / (double) Math.max(1, window.toSeconds());
        // Submitting takes well under a second unless an api process is down (then the other answers): four
        // seconds' worth of sessions at once. Following lasts up to 45 s per job, polling every second or so:
        // twelve seconds' worth, the rest waits its turn without holding up new submissions.
        sessions = Executors.newFixedThreadPool((int) Math.max(12, Math.ceil(rate * 4)));
        follows = Executors.newFixedThreadPool((int) Math.max(12, Math.ceil(rate * 12)));
        long start = System.nanoTime();
        startNanos.set(start);
        long every = window.toNanos() / Math.max(1, jobs);
        for (int n = 0; n < jobs; n++) {
            long due = start + n * every;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            int session = n;
            sessions.submit(() -> {
                long late = System.nanoTime() - due;
                if (late > LATE.toNanos()) {
                    lateStarts.incrementAndGet();
                }
                maxLatenessMs.accumulateAndGet(TimeUnit.NANOSECONDS.toMillis(late), Math::max);
                try {
                    session(session);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (RuntimeException e) {
                    ledger.unexpected("session " + session + " failed: " + e);
                }
            });
        }
        sessions.shutdown();
    }

    /** Waits for the sessions still submitting or following their jobs; true when all ended. */
    boolean awaitSessions(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        if (!sessions.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            return false;
        }
        // Every submit has ended, so nothing hands the followers new work any more.
        follows.shutdown();
        long left = Math.max(0, deadline - System.nanoTime());
        boolean ended = follows.awaitTermination(left, TimeUnit.NANOSECONDS);
        if (ended) {
            doubles.shutdown();
        }
        return ended;
    }

    /** The pace the client kept: what it offered and what the api acknowledged, per second. */
    record Pace(
            double plannedPerSecond,
            double offeredPerSecond,
            double acknowledgedPerSecond,
            long lateStarts,
            long maxLatenessMs) {}

    /**
     * Jobs submitted per second of the submitting span (the window, or longer when the client fell behind) and
     * jobs acknowledged per second of the span up to the last acknowledgement.
     */
    Pace pace(Duration window, int jobs) {
        Long start = startNanos.get();
        if (start == null) {
            return new Pace(0, 0, 0, 0, 0);
        }
        double windowSeconds = Math.max(1, window.toSeconds());
        double submitSpan = Math.max(windowSeconds, (lastSubmitNanos.get() - start) / 1e9);
        double ackSpan = Math.max(windowSeconds, (lastAcknowledgedNanos.get() - start) / 1e9);
        return new Pace(
                jobs / windowSeconds,
                ledger.get(Count.JOBS_SUBMITTED) / submitSpan,
                ledger.get(Count.JOBS_ACKNOWLEDGED) / ackSpan,
                lateStarts.get(),
                maxLatenessMs.get());
    }

    Map<ProviderFault, Long> scriptedFaults() {
        Map<ProviderFault, Long> counts = new EnumMap<>(ProviderFault.class);
        scripted.forEach((fault, count) -> counts.put(fault, count.get()));
        return counts;
    }

    private void session(int n) throws InterruptedException {
        Random random = new Random(sessionSeed(seed, n));
        String owner = OWNERS.get(random.nextInt(OWNERS.size()));
        String tag = "[chaos " + seed + "-" + n + "]";
        String key = "chaos-" + seed + "-" + n;
        ProviderFault fault = ProviderFault.pick(random);
        scripted.get(fault).incrementAndGet();
        script(fault.script(tag, readTimeoutMs, random));

        String prompt = "fix the off-by-one in the counter " + tag;
        boolean oversized = false;
        if (random.nextInt(100) < LARGE_INPUT_PERCENT) {
            owner = LARGE_INPUT_OWNER;
            oversized = random.nextInt(100) < OVERSIZED_PERCENT;
            int size = oversized
                    ? INPUT_BOUND + 1_024 + random.nextInt(INPUT_BOUND / 4)
                    : 200_000 + random.nextInt(300_000);
            prompt = largePrompt(prompt, size, random);
            ledger.count(oversized ? Count.OVERSIZED_INPUTS : Count.LARGE_INPUTS);
        }
        String baseRef = "main";
        if (random.nextInt(100) < MISSING_BASE_REF_PERCENT) {
            baseRef = "chaos-missing-" + n;
            ledger.count(Count.MISSING_BASE_REFS);
        }
        String ref = baseRef;
        String who = owner;
        String input = prompt;
        boolean overBound = oversized;

        ledger.count(Count.JOBS_SUBMITTED);
        lastSubmitNanos.accumulateAndGet(System.nanoTime(), Math::max);
        int process = random.nextInt(api.processes());
        String body = jobBody(prompt, baseRef, false);
        String jobId;
        if (random.nextInt(100) < 30) {
            ledger.count(Count.DOUBLE_SUBMITS);
            int other = (process + 1) % api.processes();
            CompletableFuture<String> second = CompletableFuture.supplyAsync(
                    () -> submitQuietly(other, who, key, jobBody(input, ref, true), overBound, random.nextLong()),
                    doubles);
            String first = submit(process, owner, key, body, oversized, random);
            jobId = first != null ? first : second.join();
            second.join();
        } else {
            jobId = submit(process, owner, key, body, oversized, random);
        }
        if (jobId == null) {
            return;
        }
        ledger.count(Count.JOBS_ACKNOWLEDGED);
        lastAcknowledgedNanos.accumulateAndGet(System.nanoTime(), Math::max);
        if (random.nextInt(100) < 25) {
            // A reload: the answer was dropped; the page sends the same key again (fields in another order).
            ledger.count(Count.RELOADS);
            String again = submit(
                    (process + 1) % api.processes(), owner, key, jobBody(prompt, baseRef, true), oversized, random);
            if (again != null && !again.equals(jobId)) {
                ledger.unexpected("reload of " + owner + "/" + key + " answered job " + again + ", first " + jobId);
            }
        }
        if (owner.equals(LARGE_INPUT_OWNER) && random.nextInt(100) < 30) {
            listJobs(owner, random);
        }
        String followed = jobId;
        long acknowledgedAt = System.currentTimeMillis();
        follows.submit(() -> {
            try {
                follow(followed, who, n, acknowledgedAt, random);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                ledger.unexpected("following job " + followed + " failed: " + e);
            }
        });
    }

    /**
     * The seed of session {@code n}'s choices, scrambled (SplittableRandom's 64-bit mix): java.util.Random's
     * first draws from neighbouring seeds follow each other, and with {@code seed * 1_000_003 + n} as it was,
     * seeds 42 and 8 never gave carol or dave a single job.
     */
    static long sessionSeed(long seed, int n) {
        long z = seed * 1_000_003L + n;
        z = (z ^ (z >>> 30)) * 0xbf58476d1ce4e5b9L;
        z = (z ^ (z >>> 27)) * 0x94d049bb133111ebL;
        return z ^ (z >>> 31);
    }

    /** Erin's page: her newest hundred jobs, large inputs and all. */
    private void listJobs(String owner, Random random) throws InterruptedException {
        ledger.count(Count.LARGE_LISTS);
        Api.Answer list =
                untilAnswered(random.nextInt(api.processes()), "GET", "/jobs?limit=100", owner, null, null, random);
        if (list != null && !list.ok()) {
            ledger.unexpected("GET /jobs?limit=100 as " + owner + " -> " + list.status() + " " + list.code());
        }
    }

    /** A prompt of about {@code size} bytes: the short request, then lines of repository context. */
    static String largePrompt(String request, int size, Random random) {
        StringBuilder prompt = new StringBuilder(size + 128).append(request).append("\n\ncontext:\n");
        for (int line = 1; prompt.length() < size; line++) {
            prompt.append("src/counter.c:")
                    .append(line)
                    .append(": counter = counter + ")
                    .append(random.nextInt(10))
                    .append("; /* keep the loop bound */\n");
        }
        return prompt.toString();
    }

    /**
     * Follows the job to an end state, acting as its owner, a reviewer and now and then a cancel button, for
     * up to 45 s from its acknowledgement: a follow that waited for a free thread has that much less time, so
     * the client's sessions end within 45 s of the last submission however far the followers fell behind.
     */
    private void follow(String jobId, String owner, int n, long started, Random random) throws InterruptedException {
        long cancelAtMs = random.nextInt(100) < 6 ? random.nextInt(8_000) : -1;
        boolean willSupersede = random.nextInt(100) < 60;
        boolean tryEarlyFallback = random.nextInt(100) < 12;
        boolean superseded = false;
        int fallbacks = 0;
        long end = started + SESSION_LENGTH.toMillis();
        while (System.currentTimeMillis() < end) {
            // About once a second: at 15 new jobs a second the polls are most of the client's requests.
            Thread.sleep(800 + random.nextInt(800));
            if (cancelAtMs >= 0 && System.currentTimeMillis() - started >= cancelAtMs) {
                cancel(jobId, owner, random);
                return;
            }
            Api.Answer job =
                    untilAnswered(random.nextInt(api.processes()), "GET", "/jobs/" + jobId, owner, null, null, random);
            if (job == null) {
                return;
            }
            if (!job.ok()) {
                ledger.unexpected("GET /jobs/" + jobId + " -> " + job.status() + " " + job.code());
                return;
            }
            String state = job.body().path("state").asText();
            JobShape shape = JobShape.of(job.body());
            if (state.equals("completed") || state.equals("cancelled")) {
                return;
            }
            if (state.equals("needs_review")) {
                if (!willSupersede || superseded) {
                    return; // left for a human reviewer, with the job's recorded reason
                }
                supersede(jobId, owner, n, random);
                superseded = true;
                continue;
            }
            if (shape.open() && tryEarlyFallback) {
                tryEarlyFallback = false;
                Api.Answer refused = requestAttempt(jobId, owner, owner, "early-" + n, "fake-b", null, random);
                if (refused != null && refused.status() == 409 && refused.code().equals("review-required")) {
                    ledger.count(Count.REVIEW_REQUIRED);
                }
                continue;
            }
            if (shape.stalled()) {
                fallback(jobId, owner, "fallback-" + n + "-" + fallbacks++, random);
            }
        }
    }

    /** A new attempt at fake-b with a fresh key, sometimes replayed with the same key (a double click). */
    void fallback(String jobId, String owner, String key, Random random) throws InterruptedException {
        ledger.count(Count.FALLBACKS);
        requestAttempt(jobId, owner, owner, key, "fake-b", null, random);
        if (random.nextInt(100) < 30) {
            ledger.count(Count.FALLBACK_REPLAYS);
            requestAttempt(jobId, owner, owner, key, "fake-b", null, random);
        }
    }

    private void supersede(String jobId, String owner, int n, Random random) throws InterruptedException {
        ledger.count(Count.SUPERSESSIONS);
        requestAttempt(
                jobId,
                owner,
                REVIEWER,
                "supersede-" + n,
                "fake-b",
                "chaos soak: the first provider's answer was lost",
                random);
    }

    /**
     * A 429 {@code spend-budget-exceeded} for the owner with a budget, counted: her budget runs out during
     * the run on purpose ({@link SpendBudget}). For any other owner it is unexpected (the caller says so).
     */
    private boolean spendRefused(String owner, Api.Answer answer) {
        if (owner.equals(SpendBudget.OWNER) && answer.status() == 429 && SpendBudget.EXCEEDED.equals(answer.code())) {
            ledger.count(Count.SPEND_REFUSED);
            return true;
        }
        return false;
    }

    /** A new attempt at {@code provider} for {@code owner}'s job, asked for by {@code caller}. */
    private Api.Answer requestAttempt(
            String jobId,
            String owner,
            String caller,
            String key,
            String provider,
            String supersedeReason,
            Random random)
            throws InterruptedException {
        ObjectNode body = Api.JSON.createObjectNode().put("provider", provider);
        if (supersedeReason != null) {
            body.putObject("supersede").put("reason", supersedeReason);
        }
        Api.Answer answer = untilAnswered(
                random.nextInt(api.processes()),
                "POST",
                "/jobs/" + jobId + "/attempts",
                caller,
                key,
                body.toString(),
                random);
        if (answer == null) {
            return null;
        }
        if (answer.ok()) {
            ledger.attemptAnswered(jobId, key, answer.body().path("id").asText());
        } else if (answer.status() != 409 && !spendRefused(owner, answer)) {
            ledger.unexpected(
                    "POST /jobs/" + jobId + "/attempts key " + key + " -> " + answer.status() + " " + answer.code());
        }
        return answer;
    }

    private void cancel(String jobId, String owner, Random random) throws InterruptedException {
        ledger.count(Count.CANCELS);
        Api.Answer answer = untilAnswered(
                random.nextInt(api.processes()), "POST", "/jobs/" + jobId + "/cancel", owner, null, null, random);
        if (answer != null
                && !answer.ok()
                && !(answer.status() == 409 && answer.code().equals("job-closed"))) {
            ledger.unexpected("POST /jobs/" + jobId + "/cancel -> " + answer.status() + " " + answer.code());
        }
    }

    private String submitQuietly(
            int process, String owner, String key, String body, boolean oversized, long randomSeed) {
        try {
            return submit(process, owner, key, body, oversized, new Random(randomSeed));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /**
     * POST /jobs until answered; records a 2xx in the ledger and returns its job id, else null. An oversized
     * body must be refused with 400 or 413 (counted, not a violation); accepting it is outside the contract.
     */
    private String submit(int process, String owner, String key, String body, boolean oversized, Random random)
            throws InterruptedException {
        Api.Answer answer = untilAnswered(process, "POST", "/jobs", owner, key, body, random);
        if (answer == null) {
            return null;
        }
        if (oversized && (answer.status() == 400 || answer.status() == 413)) {
            // Once per job, however many times its double submit or reload was refused.
            if (refusedKeys.add(key)) {
                ledger.count(Count.OVERSIZED_REFUSED);
            }
            return null;
        }
        if (oversized && answer.ok()) {
            ledger.unexpected("POST /jobs " + owner + "/" + key + " with a body of " + body.length()
                    + " bytes (over the bound) -> " + answer.status());
        }
        if (spendRefused(owner, answer)) {
            return null;
        }
        if (!answer.ok()) {
            ledger.unexpected("POST /jobs " + owner + "/" + key + " -> " + answer.status() + " " + answer.code());
            return null;
        }
        String jobId = answer.body().path("id").asText();
        ledger.jobAnswered(owner, key, jobId);
        return jobId;
    }

    /**
     * Sends until an answer below 500 arrives, moving to the other api process after each lost answer or
     * 5xx, within the retry budget; null when none came.
     */
    private Api.Answer untilAnswered(
            int process, String method, String path, String caller, String key, String body, Random random)
            throws InterruptedException {
        long deadline = System.nanoTime() + RETRY_BUDGET.toNanos();
        int target = process;
        while (System.nanoTime() < deadline) {
            try {
                Api.Answer answer = api.send(target, method, path, tokens.get(caller), key, body);
                if (answer.status() < 500) {
                    return answer;
                }
            } catch (IOException lost) {
                // The process died, the connection was refused or reset: the outcome is unknown; ask again.
            }
            if (key != null) {
                ledger.count(Count.RETRIES);
            }
            target = (target + 1) % api.processes();
            Thread.sleep(200 + random.nextInt(300));
        }
        ledger.count(Count.GAVE_UP);
        return null;
    }

    /** The job's body; {@code reordered} sends the same JSON with its fields in another order. */
    static String jobBody(String prompt, String baseRef, boolean reordered) {
        ObjectNode body = Api.JSON.createObjectNode();
        if (reordered) {
            body.put("provider", "fake-a");
            body.putObject("input")
                    .put("baseRef", baseRef)
                    .put("repository", "demo")
                    .put("prompt", prompt);
        } else {
            body.putObject("input")
                    .put("prompt", prompt)
                    .put("repository", "demo")
                    .put("baseRef", baseRef);
            body.put("provider", "fake-a");
        }
        return body.toString();
    }

    private void script(ObjectNode script) throws InterruptedException {
        if (script == null) {
            return;
        }
        HttpRequest request = HttpRequest.newBuilder(fake.resolve("/fake/scripts"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(script.toString()))
                .build();
        try {
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            if (response.statusCode() != 201) {
                throw new IllegalStateException("fake provider refused a script: " + response.body());
            }
        } catch (IOException e) {
            throw new IllegalStateException("fake provider unreachable", e);
        }
    }

    /** What the client reads off a job to decide its next click. */
    record JobShape(boolean open, boolean succeeded) {
        static JobShape of(JsonNode job) {
            boolean open = false;
            boolean succeeded = false;
            for (JsonNode attempt : job.path("attempts")) {
                String state = attempt.path("state").asText().toLowerCase(Locale.ROOT);
                open |= state.equals("starting") || state.equals("unknown");
                succeeded |= state.equals("succeeded");
            }
            return new JobShape(open, succeeded);
        }

        /** Every attempt failed or lost: only the owner's fallback moves the job on. */
        boolean stalled() {
            return !open && !succeeded;
        }
    }
}
