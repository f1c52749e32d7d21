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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The client load: one session per job, as a user and a flaky network would drive it. Submits (sometimes
 * twice at once), reloads (replays the key after dropping the answer), retries the same key on the other
 * api process when an answer is lost or a 5xx, asks for fallbacks, lets a reviewer supersede, cancels.
 * Every choice comes from the seed; every 2xx lands in the {@link ClientLedger}.
 */
final class Load {

    static final List<String> OWNERS = List.of("alice", "bob", "carol", "dave");
    static final String REVIEWER = "rita";
    private static final Duration RETRY_BUDGET = Duration.ofSeconds(90);
    private static final Duration SESSION_LENGTH = Duration.ofSeconds(45);
    private static final int SESSION_THREADS = 12;

    private final Api api;
    private final ClientLedger ledger;
    private final long seed;
    private final URI fake;
    private final long readTimeoutMs;
    private final Map<String, String> tokens;
    private final HttpClient http = HttpClient.newHttpClient();
    private final ExecutorService sessions = Executors.newFixedThreadPool(SESSION_THREADS);
    // The second request of a double submit runs here, so it really overlaps the first.
    private final ExecutorService doubles = Executors.newCachedThreadPool();
    private final Map<ProviderFault, AtomicLong> scripted = new EnumMap<>(ProviderFault.class);

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
        this.tokens.put(REVIEWER, tokens.mint(REVIEWER, List.of("user", "reviewer")));
        for (ProviderFault fault : ProviderFault.values()) {
            scripted.put(fault, new AtomicLong());
        }
    }

    /** Starts {@code jobs} sessions spread evenly over {@code window}; returns when the last one has started. */
    void run(Duration window, int jobs) throws InterruptedException {
        long start = System.nanoTime();
        long every = window.toNanos() / Math.max(1, jobs);
        for (int n = 0; n < jobs; n++) {
            long due = start + n * every;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            int session = n;
            sessions.submit(() -> {
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

    /** Waits for the sessions still following their jobs; true when all ended. */
    boolean awaitSessions(Duration timeout) throws InterruptedException {
        boolean ended = sessions.awaitTermination(timeout.toMillis(), TimeUnit.MILLISECONDS);
        doubles.shutdown();
        return ended;
    }

    Map<ProviderFault, Long> scriptedFaults() {
        Map<ProviderFault, Long> counts = new EnumMap<>(ProviderFault.class);
        scripted.forEach((fault, count) -> counts.put(fault, count.get()));
        return counts;
    }

    private void session(int n) throws InterruptedException {
        Random random = new Random(seed * 1_000_003L + n);
        String owner = OWNERS.get(random.nextInt(OWNERS.size()));
        String tag = "[chaos " + seed + "-" + n + "]";
        String key = "chaos-" + seed + "-" + n;
        ProviderFault fault = ProviderFault.pick(random);
        scripted.get(fault).incrementAndGet();
        script(fault.script(tag, readTimeoutMs, random));

        ledger.count(Count.JOBS_SUBMITTED);
        int process = random.nextInt(api.processes());
        String body = jobBody(tag, false);
        String jobId;
        if (random.nextInt(100) < 30) {
            ledger.count(Count.DOUBLE_SUBMITS);
            int other = (process + 1) % api.processes();
            CompletableFuture<String> second = CompletableFuture.supplyAsync(
                    () -> submitQuietly(other, owner, key, jobBody(tag, true), random.nextLong()), doubles);
            String first = submit(process, owner, key, body, random);
            jobId = first != null ? first : second.join();
            second.join();
        } else {
            jobId = submit(process, owner, key, body, random);
        }
        if (jobId == null) {
            return;
        }
        ledger.count(Count.JOBS_ACKNOWLEDGED);
        if (random.nextInt(100) < 25) {
            // A reload: the answer was dropped; the page sends the same key again (fields in another order).
            ledger.count(Count.RELOADS);
            String again = submit((process + 1) % api.processes(), owner, key, jobBody(tag, true), random);
            if (again != null && !again.equals(jobId)) {
                ledger.unexpected("reload of " + owner + "/" + key + " answered job " + again + ", first " + jobId);
            }
        }
        follow(jobId, owner, n, random);
    }

    /** Follows the job to an end state, acting as its owner, a reviewer and now and then a cancel button. */
    private void follow(String jobId, String owner, int n, Random random) throws InterruptedException {
        long cancelAtMs = random.nextInt(100) < 6 ? random.nextInt(8_000) : -1;
        boolean willSupersede = random.nextInt(100) < 60;
        boolean tryEarlyFallback = random.nextInt(100) < 12;
        boolean superseded = false;
        int fallbacks = 0;
        long started = System.currentTimeMillis();
        long end = started + SESSION_LENGTH.toMillis();
        while (System.currentTimeMillis() < end) {
            Thread.sleep(400 + random.nextInt(400));
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
                supersede(jobId, n, random);
                superseded = true;
                continue;
            }
            if (shape.open() && tryEarlyFallback) {
                tryEarlyFallback = false;
                Api.Answer refused = requestAttempt(jobId, owner, "early-" + n, "fake-b", null, random);
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
        requestAttempt(jobId, owner, key, "fake-b", null, random);
        if (random.nextInt(100) < 30) {
            ledger.count(Count.FALLBACK_REPLAYS);
            requestAttempt(jobId, owner, key, "fake-b", null, random);
        }
    }

    private void supersede(String jobId, int n, Random random) throws InterruptedException {
        ledger.count(Count.SUPERSESSIONS);
        requestAttempt(
                jobId,
                REVIEWER,
                "supersede-" + n,
                "fake-b",
                "chaos soak: the first provider's answer was lost",
                random);
    }

    private Api.Answer requestAttempt(
            String jobId, String caller, String key, String provider, String supersedeReason, Random random)
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
        } else if (answer.status() != 409) {
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

    private String submitQuietly(int process, String owner, String key, String body, long randomSeed) {
        try {
            return submit(process, owner, key, body, new Random(randomSeed));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** POST /jobs until answered; records a 2xx in the ledger and returns its job id, else null. */
    private String submit(int process, String owner, String key, String body, Random random)
            throws InterruptedException {
        Api.Answer answer = untilAnswered(process, "POST", "/jobs", owner, key, body, random);
        if (answer == null) {
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

    private static String jobBody(String tag, boolean reordered) {
        String prompt = "fix the off-by-one in the counter " + tag;
        return reordered
                ? "{\"provider\":\"fake-a\",\"input\":{\"baseRef\":\"main\",\"repository\":\"demo\",\"prompt\":\""
                        + prompt + "\"}}"
                : "{\"input\":{\"prompt\":\"" + prompt + "\",\"repository\":\"demo\",\"baseRef\":\"main\"},"
                        + "\"provider\":\"fake-a\"}";
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
