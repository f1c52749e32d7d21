package dev.jobapi.chaos;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the client load was told: every 2xx answer's job and attempt ids by the key that asked for them,
 * and how many requests of each kind it sent. The checker holds the database to these.
 */
final class ClientLedger {

    /** Counters of the report; the names are the report's lines. */
    enum Count {
        JOBS_SUBMITTED("jobs submitted (distinct keys)"),
        JOBS_ACKNOWLEDGED("jobs acknowledged with a 2xx"),
        DOUBLE_SUBMITS("double submits (same key twice, concurrently)"),
        RELOADS("reloads (key replayed after the answer was dropped)"),
        RETRIES("retries of the same key after no answer or a 5xx"),
        FALLBACKS("fallback requests (new attempt, fresh key)"),
        FALLBACK_REPLAYS("fallback requests replayed with the same key"),
        REVIEW_REQUIRED("fallbacks refused with review-required"),
        SUPERSESSIONS("reviewer supersessions"),
        CANCELS("cancels"),
        LARGE_INPUTS("large inputs sent by erin (prompts of 200-500 KB, under the 512 KiB input bound)"),
        OVERSIZED_INPUTS("oversized inputs sent by erin (over the 512 KiB input bound)"),
        OVERSIZED_REFUSED("oversized inputs refused with 400/413 (expected, not a violation; once per job)"),
        MISSING_BASE_REFS("jobs whose baseRef does not exist in the target (apply refused: review, with the reason)"),
        LARGE_LISTS("erin listing her jobs with their large inputs (GET /jobs?limit=100)"),
        SPEND_REFUSED("requests of " + SpendBudget.OWNER + " refused with 429 " + SpendBudget.EXCEEDED
                + " (her money budget ran out: expected, not a violation)"),
        GAVE_UP("requests never answered within the retry budget");

        final String label;

        Count(String label) {
            this.label = label;
        }
    }

    /** The ledger as written to and read from {@code ledger.json}, for {@code chaos/run check}. */
    record Saved(
            Map<String, Set<String>> jobIdsByOwnerKey,
            Map<String, String> ownerByJob,
            Map<String, Set<String>> attemptIdsByJobKey,
            Map<Count, Long> counts,
            List<String> unexpectedAnswers,
            List<String> poisonMessages) {

        /** The poison bodies published; none in a ledger written before they existed. */
        public List<String> poisonMessages() {
            return poisonMessages == null ? List.of() : poisonMessages;
        }
    }

    private final Map<String, Set<String>> jobIdsByOwnerKey = new ConcurrentSkipListMap<>();
    private final Map<String, String> ownerByJob = new ConcurrentSkipListMap<>();
    private final Map<String, Set<String>> attemptIdsByJobKey = new ConcurrentSkipListMap<>();
    private final Map<Count, AtomicLong> counts = new ConcurrentHashMap<>();
    private final List<String> unexpectedAnswers = new ArrayList<>();
    private final List<String> poisonMessages = new ArrayList<>();

    void count(Count count) {
        counts.computeIfAbsent(count, c -> new AtomicLong()).incrementAndGet();
    }

    long get(Count count) {
        AtomicLong value = counts.get(count);
        return value == null ? 0 : value.get();
    }

    /** A 2xx answer to POST /jobs: the job the key stands for. */
    void jobAnswered(String owner, String key, String jobId) {
        jobIdsByOwnerKey
                .computeIfAbsent(owner + " " + key, k -> ConcurrentHashMap.newKeySet())
                .add(jobId);
        ownerByJob.put(jobId, owner);
    }

    /** A 2xx answer to POST /jobs/{id}/attempts: the attempt the key stands for. */
    void attemptAnswered(String jobId, String key, String attemptId) {
        attemptIdsByJobKey
                .computeIfAbsent(jobId + " " + key, k -> ConcurrentHashMap.newKeySet())
                .add(attemptId);
    }

    /** An answer the contract does not allow for the request (kept for the report, at most 50). */
    synchronized void unexpected(String what) {
        if (unexpectedAnswers.size() < 50) {
            unexpectedAnswers.add(what);
        }
    }

    /** A deliberately poisoned message the broker confirmed into the work queue: the DLQ must hold it. */
    synchronized void poisoned(String body) {
        poisonMessages.add(body);
    }

    synchronized Saved saved() {
        Map<Count, Long> values = new TreeMap<>();
        counts.forEach((count, value) -> values.put(count, value.get()));
        return new Saved(
                Map.copyOf(jobIdsByOwnerKey),
                Map.copyOf(ownerByJob),
                Map.copyOf(attemptIdsByJobKey),
                values,
                List.copyOf(unexpectedAnswers),
                List.copyOf(poisonMessages));
    }

    void save(Path file) throws IOException {
        Api.JSON.writerWithDefaultPrettyPrinter().writeValue(file.toFile(), saved());
    }

    static Saved load(Path file) throws IOException {
        return Api.JSON.readValue(file.toFile(), Saved.class);
    }
}
