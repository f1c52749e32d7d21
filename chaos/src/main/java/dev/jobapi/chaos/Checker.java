package dev.jobapi.chaos;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.eclipse.jgit.lib.ObjectId;
import org.eclipse.jgit.lib.Ref;
import org.eclipse.jgit.lib.Repository;
import org.eclipse.jgit.revwalk.RevCommit;
import org.eclipse.jgit.revwalk.RevWalk;
import org.eclipse.jgit.storage.file.FileRepositoryBuilder;

/**
 * The invariants of issues 8, 13 and 34, checked after the drain over the database (JDBC), the client's
 * ledger, the fake provider's own request log, the target git repository, the dead-letter queue and what
 * the webhook receivers got. Each violation is one line naming what broke and the ids to look up.
 */
final class Checker {

    enum Invariant {
        ONE_JOB_ONE_WINNER("one job per (owner, key); never two winners for a job"),
        APPLY_MATCHES_COMMITS("applied_patch rows = completed jobs = commits on the target branches"),
        NO_INTENTION_LOST("no intention lost: every acknowledged job exists; no attempt starting; outbox sent;"
                + " the work queue exists and it and the delay queue are drained"),
        USAGE_ACCOUNTED("no applied attempt with unknown usage; every provider-reported token in usage_record"),
        DEAD_LETTERS_ACCOUNTED("the DLQ holds exactly the deliberately poisoned messages, each once, all listed"),
        EVERY_JOB_SETTLED("every job ends completed, cancelled or needs_review with a reason, and has an attempt"),
        PAID_RESULTS_USED("every attempt with stored output and provider-reported usage is the winner, superseded,"
                + " refused by the apply target, or on a job closed before its result arrived"),
        SPEND_WITHIN_BUDGET("no owner's settled cost exceeds their money budget; each budget window's spend and"
                + " reservations are its attempts' costs and open reservations"),
        WEBHOOK_EVENT_LOST("webhook terminal event lost: every completed or cancelled job of an owner with webhook"
                + " endpoints had its job.completed or job.cancelled answered 2xx at each of them"),
        WEBHOOK_EVENT_TWICE("webhook terminal event twice: one webhook-id per (endpoint, job, end) answered 2xx"),
        WEBHOOK_SIGNATURE_INVALID("webhook signature invalid: every request the receivers got verified"),
        WEBHOOK_DELIVERY_FAILED("webhook delivery failed: no webhook_delivery given up");

        final String title;

        Invariant(String title) {
            this.title = title;
        }
    }

    /** One request of the fake provider's log, reduced to what the ledger must account for. */
    record ProviderRequest(String attemptId, Integer status, Integer promptTokens, Integer completionTokens) {
        boolean reportedUsage() {
            return attemptId != null && promptTokens != null && completionTokens != null;
        }
    }

    /** One message of the dead-letter queue as GET /admin/dlq lists it. */
    record DeadLetter(String id, String attemptId, String jobId, String body, String reason) {}

    record Inputs(
            ClientLedger.Saved ledger,
            List<ProviderRequest> providerLog,
            Path gitRepository,
            List<DeadLetter> deadLetters,
            Map<String, Long> queueDepths,
            WebhookReceiver.Log webhooks) {}

    /** Violations per invariant (every invariant present, maybe empty) and the figures of the report. */
    record Result(Map<Invariant, List<String>> violations, Map<String, Object> figures) {
        boolean clean() {
            return violations.values().stream().allMatch(List::isEmpty);
        }
    }

    static final String WORK_QUEUE = "jobs.attempts";
    static final String DELAY_QUEUE = "jobs.attempts.parked";
    static final String BRANCH_PREFIX = "refs/heads/jobapi/";
    private static final String TRAILER = "Idempotency-Key: ";

    private final Connection db;
    private final Inputs inputs;
    private final Map<Invariant, List<String>> violations = new EnumMap<>(Invariant.class);
    private final Map<String, Object> figures = new LinkedHashMap<>();

    private Checker(Connection db, Inputs inputs) {
        this.db = db;
        this.inputs = inputs;
        for (Invariant invariant : Invariant.values()) {
            violations.put(invariant, new ArrayList<>());
        }
    }

    static Result check(Connection db, Inputs inputs) throws SQLException, IOException {
        Checker checker = new Checker(db, inputs);
        checker.figures();
        checker.oneJobOneWinner();
        checker.applyMatchesCommits();
        checker.noIntentionLost();
        checker.usageAccounted();
        checker.deadLettersAccounted();
        checker.everyJobSettled();
        checker.paidResultsUsed();
        checker.spendWithinBudget();
        checker.webhooks();
        return new Result(checker.violations, checker.figures);
    }

    private void figures() throws SQLException {
        figures.put("jobs by state", countsBy("SELECT state, count(*) FROM job GROUP BY state"));
        figures.put("attempts by state", countsBy("SELECT state, count(*) FROM attempt GROUP BY state"));
        figures.put(
                "quarantined attempts (usage missing)",
                single("SELECT count(*) FROM attempt WHERE state = 'quarantined'"));
        figures.put("usage records by source", countsBy("SELECT source, count(*) FROM usage_record GROUP BY source"));
        figures.put("provider requests (fake provider's log)", (long)
                inputs.providerLog().size());
    }

    private void oneJobOneWinner() throws SQLException {
        List<String> found = violations.get(Invariant.ONE_JOB_ONE_WINNER);
        rows(
                "SELECT owner_id, idempotency_key, count(*) FROM job GROUP BY 1, 2 HAVING count(*) > 1",
                rs -> found.add(rs.getLong(3) + " jobs for owner " + rs.getString(1) + ", key " + rs.getString(2)));
        inputs.ledger().jobIdsByOwnerKey().forEach((ownerKey, ids) -> {
            if (ids.size() > 1) {
                found.add("client was answered " + ids.size() + " different jobs for " + ownerKey + ": " + ids);
            }
        });
        inputs.ledger().attemptIdsByJobKey().forEach((jobKey, ids) -> {
            if (ids.size() > 1) {
                found.add(
                        "client was answered " + ids.size() + " different attempts for job/key " + jobKey + ": " + ids);
            }
        });
        rows(
                "SELECT job_id, count(*) FROM attempt WHERE state = 'succeeded' GROUP BY job_id HAVING count(*) > 1",
                rs -> found.add("job " + rs.getString(1) + " has " + rs.getLong(2) + " succeeded attempts"));
        rows(
                "SELECT a.job_id, a.id FROM attempt a JOIN job j ON j.id = a.job_id"
                        + " WHERE a.state = 'succeeded' AND j.winning_attempt_id IS DISTINCT FROM a.id",
                rs -> found.add("job " + rs.getString(1) + ": succeeded attempt " + rs.getString(2)
                        + " is not its winning_attempt_id"));
        rows(
                "SELECT job_id, count(*) FROM applied_patch GROUP BY job_id HAVING count(*) > 1",
                rs -> found.add("job " + rs.getString(1) + " has " + rs.getLong(2) + " applied_patch rows"));
        rows(
                "SELECT p.job_id, p.attempt_id FROM applied_patch p JOIN job j ON j.id = p.job_id"
                        + " WHERE j.winning_attempt_id IS DISTINCT FROM p.attempt_id",
                rs -> found.add("job " + rs.getString(1) + ": applied attempt " + rs.getString(2)
                        + " is not its winning_attempt_id"));
    }

    private record Commit(String sha, String applyKey) {}

    private void applyMatchesCommits() throws SQLException, IOException {
        List<String> found = violations.get(Invariant.APPLY_MATCHES_COMMITS);
        record Applied(String key, String status, String targetRef) {}
        Map<String, Applied> appliedByJob = new HashMap<>();
        rows(
                "SELECT job_id, idem_key, status, target_ref FROM applied_patch",
                rs -> appliedByJob.put(
                        rs.getString(1), new Applied(rs.getString(2), rs.getString(3), rs.getString(4))));
        Set<String> completed = new HashSet<>();
        rows("SELECT id FROM job WHERE state = 'completed'", rs -> completed.add(rs.getString(1)));
        Map<String, List<Commit>> branches = branches(inputs.gitRepository());
        long applied = appliedByJob.values().stream()
                .filter(a -> a.status().equals("applied"))
                .count();
        long commits = branches.values().stream().mapToLong(List::size).sum();
        figures.put("applied_patch rows (applied)", applied);
        figures.put("completed jobs", (long) completed.size());
        figures.put("commits on jobapi/* branches", commits);

        for (String job : new TreeSet<>(completed)) {
            Applied row = appliedByJob.get(job);
            if (row == null || !row.status().equals("applied")) {
                found.add("completed job " + job + " has no applied applied_patch row"
                        + (row == null ? "" : " (status " + row.status() + ")"));
            }
            if (!branches.containsKey(job)) {
                found.add("completed job " + job + " has no branch jobapi/" + job);
            }
        }
        for (var entry : new TreeMap<>(appliedByJob).entrySet()) {
            String job = entry.getKey();
            Applied row = entry.getValue();
            if (!completed.contains(job)) {
                found.add(
                        "applied_patch of job " + job + " (status " + row.status() + ") but the job is not completed");
            }
        }
        for (var entry : new TreeMap<>(branches).entrySet()) {
            String job = entry.getKey();
            List<Commit> onBranch = entry.getValue();
            Applied row = appliedByJob.get(job);
            if (onBranch.size() != 1) {
                found.add("branch jobapi/" + job + " has " + onBranch.size() + " commits, not 1");
            }
            if (row == null) {
                found.add("branch jobapi/" + job + " has commits but the job has no applied_patch row");
                continue;
            }
            for (Commit commit : onBranch) {
                if (!row.key().equals(commit.applyKey())) {
                    found.add("commit " + commit.sha() + " on jobapi/" + job + " carries key " + commit.applyKey()
                            + ", applied_patch has " + row.key());
                }
            }
            if (onBranch.size() == 1
                    && row.targetRef() != null
                    && !row.targetRef().equals(onBranch.get(0).sha())) {
                found.add("applied_patch of job " + job + " names commit " + row.targetRef() + ", the branch has "
                        + onBranch.get(0).sha());
            }
        }
    }

    /** The commits of each jobapi/* branch that are not on main, keyed by job id. */
    static Map<String, List<Commit>> branches(Path repository) throws IOException {
        Map<String, List<Commit>> branches = new HashMap<>();
        File gitDir = repository.resolve(".git").toFile();
        try (Repository repo = new FileRepositoryBuilder()
                        .setGitDir(gitDir.isDirectory() ? gitDir : repository.toFile())
                        .setMustExist(true)
                        .build();
                RevWalk walk = new RevWalk(repo)) {
            ObjectId main = repo.resolve("refs/heads/main");
            for (Ref ref : repo.getRefDatabase().getRefsByPrefix(BRANCH_PREFIX)) {
                walk.reset();
                walk.markStart(walk.parseCommit(ref.getObjectId()));
                walk.markUninteresting(walk.parseCommit(main));
                List<Commit> commits = new ArrayList<>();
                for (RevCommit commit : walk) {
                    commits.add(new Commit(commit.getName(), trailer(commit.getFullMessage())));
                }
                branches.put(ref.getName().substring(BRANCH_PREFIX.length()), commits);
            }
        }
        return branches;
    }

    private static String trailer(String message) {
        for (String line : message.split("\n")) {
            if (line.startsWith(TRAILER)) {
                return line.substring(TRAILER.length()).strip();
            }
        }
        return null;
    }

    private void noIntentionLost() throws SQLException {
        List<String> found = violations.get(Invariant.NO_INTENTION_LOST);
        Map<String, String> ownerById = new HashMap<>();
        rows("SELECT id, owner_id FROM job", rs -> ownerById.put(rs.getString(1), rs.getString(2)));
        new TreeMap<>(inputs.ledger().ownerByJob()).forEach((job, owner) -> {
            if (!owner.equals(ownerById.get(job))) {
                found.add("job " + job + " was acknowledged to " + owner + " but "
                        + (ownerById.containsKey(job) ? "belongs to " + ownerById.get(job) : "does not exist"));
            }
        });
        rows(
                "SELECT a.id, a.job_id, EXISTS (SELECT 1 FROM outbox o WHERE o.attempt_id = a.id AND o.sent_at IS NULL)"
                        + " FROM attempt a WHERE a.state = 'starting' ORDER BY a.id",
                rs -> found.add("attempt " + rs.getString(1) + " of job " + rs.getString(2) + " is still starting"
                        + (rs.getBoolean(3) ? " (its outbox row is unsent)" : "")));
        long unsent = single("SELECT count(*) FROM outbox WHERE sent_at IS NULL");
        if (unsent > 0) {
            found.add(unsent + " outbox rows never sent");
        }
        if (!inputs.queueDepths().containsKey(WORK_QUEUE)) {
            found.add("queue " + WORK_QUEUE + " does not exist: deleted and never declared again");
        }
        for (String queue : List.of(WORK_QUEUE, DELAY_QUEUE)) {
            long depth = inputs.queueDepths().getOrDefault(queue, 0L);
            if (depth > 0) {
                found.add(depth + " messages still in " + queue);
            }
        }
    }

    private void usageAccounted() throws SQLException {
        List<String> found = violations.get(Invariant.USAGE_ACCOUNTED);
        rows(
                "SELECT p.job_id, p.attempt_id, u.source FROM applied_patch p"
                        + " LEFT JOIN usage_record u ON u.attempt_id = p.attempt_id"
                        + " WHERE u.source IS DISTINCT FROM 'provider_reported' ORDER BY p.job_id",
                rs -> found.add("job " + rs.getString(1) + ": applied attempt " + rs.getString(2) + " has "
                        + (rs.getString(3) == null ? "no usage record" : "usage " + rs.getString(3))));
        record Usage(String source, Integer prompt, Integer completion) {}
        Map<String, Usage> ledger = new HashMap<>();
        rows(
                "SELECT attempt_id, source, prompt_tokens, completion_tokens FROM usage_record",
                rs -> ledger.put(rs.getString(1), new Usage(rs.getString(2), (Integer) rs.getObject(3), (Integer)
                        rs.getObject(4))));
        long reportedTokens = 0;
        for (ProviderRequest request : inputs.providerLog()) {
            if (!request.reportedUsage()) {
                continue;
            }
            reportedTokens += request.promptTokens() + request.completionTokens();
            Usage recorded = ledger.get(request.attemptId());
            if (recorded == null) {
                found.add("attempt " + request.attemptId() + ": the provider reported " + request.promptTokens() + "+"
                        + request.completionTokens() + " tokens, usage_record has nothing");
            } else if (!recorded.source().equals("provider_reported")
                    || !request.promptTokens().equals(recorded.prompt())
                    || !request.completionTokens().equals(recorded.completion())) {
                found.add("attempt " + request.attemptId() + ": the provider reported " + request.promptTokens() + "+"
                        + request.completionTokens() + " tokens, usage_record has " + recorded.source() + " "
                        + recorded.prompt() + "+" + recorded.completion());
            }
        }
        figures.put("tokens the provider reported", reportedTokens);
        figures.put(
                "tokens in usage_record",
                single("SELECT coalesce(sum(prompt_tokens + completion_tokens), 0) FROM usage_record"));
    }

    /**
     * The DLQ is an alarm: after the drain it holds the soak's deliberately poisoned messages, each once, and
     * nothing else. A healthy attempt's message there was dead-lettered by a fault it should have survived.
     */
    private void deadLettersAccounted() throws SQLException {
        List<String> found = violations.get(Invariant.DEAD_LETTERS_ACCOUNTED);
        // Dead letters are rows (issue 30): the mover keeps the broker's queue near empty.
        long depth = single("SELECT count(*) FROM dead_letter WHERE settlement IS NULL");
        List<String> poison = inputs.ledger().poisonMessages();
        figures.put("dead-lettered messages", depth);
        figures.put("poison messages published (must be in the DLQ)", (long) poison.size());
        if (depth != inputs.deadLetters().size()) {
            found.add("dead_letter holds " + depth + " pending rows, GET /admin/dlq listed "
                    + inputs.deadLetters().size());
        }
        Map<String, String> attemptStates = new HashMap<>();
        rows("SELECT id, state FROM attempt", rs -> attemptStates.put(rs.getString(1), rs.getString(2)));
        Map<String, Integer> poisonSeen = new TreeMap<>();
        for (DeadLetter letter : inputs.deadLetters()) {
            if (letter.body() != null && poison.contains(letter.body())) {
                poisonSeen.merge(letter.body(), 1, Integer::sum);
                continue;
            }
            String state = letter.attemptId() == null ? null : attemptStates.get(letter.attemptId());
            String what = letter.attemptId() == null
                    ? "no attempt id, body " + abbreviate(letter.body())
                    : "attempt " + letter.attemptId()
                            + (state == null
                                    ? " (unknown to the database)"
                                    : " (" + state + (state.equals("starting") ? ": nothing will ever work on it" : "")
                                            + ")")
                            + " of job " + letter.jobId();
            found.add("dead letter " + letter.id() + " is not a deliberately poisoned message: " + what + ", reason "
                    + letter.reason());
        }
        figures.put("poison messages in the DLQ", (long) poisonSeen.size());
        for (String body : poison) {
            int times = poisonSeen.getOrDefault(body, 0);
            if (times == 0) {
                found.add("poison message \"" + body + "\" is not in the DLQ");
            } else if (times > 1) {
                found.add("poison message \"" + body + "\" is in the DLQ " + times + " times");
            }
        }
    }

    private static String abbreviate(String text) {
        if (text == null) {
            return "null";
        }
        return "\"" + (text.length() > 60 ? text.substring(0, 60) + "..." : text) + "\"";
    }

    /**
     * After the drain every job is settled: completed, cancelled, or in review with a reason a reviewer can read;
     * nothing accepted or running. Each job also has at least one attempt (intake writes both in one
     * transaction). The line names the job's attempts and its apply, which is where a stranded job's story
     * starts.
     */
    private void everyJobSettled() throws SQLException {
        List<String> found = violations.get(Invariant.EVERY_JOB_SETTLED);
        figures.put(
                "jobs not settled (accepted, running, or in review without a reason)",
                single(
                        "SELECT count(*) FROM job WHERE state <> ALL(?)"
                                + " AND NOT (state = 'needs_review' AND coalesce(btrim(review_reason), '') <> '')",
                        States.TERMINAL_JOBS));
        rows(
                "SELECT j.id, j.state,"
                        + " (SELECT string_agg(a.state, ', ' ORDER BY a.created_at, a.id) FROM attempt a"
                        + " WHERE a.job_id = j.id),"
                        + " (SELECT string_agg(p.status, ', ') FROM applied_patch p WHERE p.job_id = j.id)"
                        + " FROM job j WHERE j.state <> ALL(?)"
                        + " AND NOT (j.state = 'needs_review' AND coalesce(btrim(j.review_reason), '') <> '')"
                        + " ORDER BY j.id",
                rs -> found.add("job " + rs.getString(1) + " ended " + rs.getString(2)
                        + (rs.getString(2).equals("needs_review") ? " without a recorded reason" : "")
                        + " (attempts: " + (rs.getString(3) == null ? "none" : rs.getString(3))
                        + (rs.getString(4) == null ? "" : "; apply " + rs.getString(4)) + ")"),
                States.TERMINAL_JOBS);
        rows(
                "SELECT j.id, j.state FROM job j WHERE NOT EXISTS (SELECT 1 FROM attempt a WHERE a.job_id = j.id)"
                        + " AND j.state = ANY(?) ORDER BY j.id",
                rs -> found.add("job " + rs.getString(1) + " (" + rs.getString(2) + ") has no attempt at all"),
                States.TERMINAL_OR_REVIEWED_JOBS);
    }

    /**
     * A result the provider delivered and billed is used or deliberately set aside: it is the job's winner, its
     * attempt was superseded (a reviewer's choice or a lost election), it won and the apply target refused its
     * patch for good (the attempt failed with that reason, the job went to review), or the job was closed (cancelled, or
     * completed by another attempt) before the result was stored. Anything else is a paid-for answer left
     * stranded, typically an attempt still {@code unknown} on a job in review.
     */
    private void paidResultsUsed() throws SQLException {
        List<String> found = violations.get(Invariant.PAID_RESULTS_USED);
        figures.put(
                "attempts with stored output and provider-reported usage",
                single("SELECT count(*) FROM generation g JOIN usage_record u ON u.attempt_id = g.attempt_id"
                        + " AND u.source = 'provider_reported'"));
        rows(
                "SELECT a.id, a.job_id, a.state, j.state, g.created_at,"
                        + " coalesce((SELECT min(e.at) FROM job_event e WHERE e.job_id = j.id"
                        + " AND e.kind IN ('job.cancelled', 'job.completed')), j.updated_at) AS closed_at"
                        + " FROM attempt a JOIN job j ON j.id = a.job_id"
                        + " JOIN generation g ON g.attempt_id = a.id"
                        + " JOIN usage_record u ON u.attempt_id = a.id AND u.source = 'provider_reported'"
                        + " WHERE j.winning_attempt_id IS DISTINCT FROM a.id AND a.state <> 'superseded'"
                        + " AND NOT (a.state = 'failed' AND a.reason LIKE 'apply refused by the target%')"
                        + " ORDER BY a.id",
                rs -> {
                    boolean closed = rs.getString(4).equals("completed")
                            || rs.getString(4).equals("cancelled");
                    var storedAt = rs.getTimestamp(5);
                    var closedAt = rs.getTimestamp(6);
                    if (closed && !closedAt.after(storedAt)) {
                        return; // the job was closed first: recorded, never to be applied
                    }
                    found.add("attempt " + rs.getString(1) + " of job " + rs.getString(2) + " (attempt "
                            + rs.getString(3) + ", job " + rs.getString(4) + ") has a stored, provider-billed output"
                            + " that is not the winner and was not superseded"
                            + (closed ? "; the job was closed after that output arrived" : ""));
                });
    }

    /**
     * Rule 20 under the soak's faults: per budget window (an owner's UTC day or month, of every provider or of
     * one), what was settled never passes the limit, the window's spend is what its attempts cost (nothing
     * settled twice or lost), and what it holds reserved is what its attempts' open reservations hold (none
     * leaked, none released twice).
     */
    private void spendWithinBudget() throws SQLException {
        List<String> found = violations.get(Invariant.SPEND_WITHIN_BUDGET);
        List<String> windows = new ArrayList<>();
        String ofWindow = " FROM attempt a JOIN job j ON j.id = a.job_id"
                + " WHERE spend_window_matches(w, j.owner_id, a.provider, a.sent_at)";
        rows(
                "SELECT w.owner_id, w.period || ' budget' || CASE WHEN w.provider = '' THEN '' ELSE ' for ' || w.provider END,"
                        + " w.starts_on, b.limit_usd, w.spent_usd, w.reserved_usd,"
                        + " (SELECT coalesce(sum(a.cost_usd), 0)" + ofWindow + ") AS attempts_cost,"
                        + " (SELECT coalesce(sum(a.reserved_usd), 0)" + ofWindow
                        + " AND a.reservation_open AND spend_window_name(w) = ANY (a.reserved_in)) AS attempts_reserved,"
                        // A refused claim sent nothing: it has no sent_at to place it in a window.
                        + " (SELECT count(*) FROM attempt a JOIN job j ON j.id = a.job_id WHERE j.owner_id = w.owner_id"
                        + " AND a.reason LIKE '%budget%no request sent') AS claims_refused"
                        + " FROM spend_window w JOIN spend_budget b ON b.owner_id = w.owner_id AND b.period = w.period"
                        + " AND b.provider = w.provider ORDER BY 1, 2, 3",
                rs -> {
                    String window = rs.getString(1) + "'s " + rs.getString(2) + " from " + rs.getString(3);
                    var limit = rs.getBigDecimal(4);
                    var spent = rs.getBigDecimal(5);
                    var reserved = rs.getBigDecimal(6);
                    var attemptsCost = rs.getBigDecimal(7);
                    var attemptsReserved = rs.getBigDecimal(8);
                    windows.add(window + ": " + spent.toPlainString() + " USD spent, " + reserved.toPlainString()
                            + " USD reserved of " + limit.toPlainString() + " USD; " + rs.getLong(9)
                            + " claims of the owner refused for a budget");
                    if (spent.compareTo(limit) > 0) {
                        found.add(window + ": " + spent.toPlainString() + " USD settled, past its limit of "
                                + limit.toPlainString() + " USD");
                    }
                    if (spent.compareTo(attemptsCost) != 0) {
                        found.add(window + ": " + spent.toPlainString() + " USD spent, but its attempts cost "
                                + attemptsCost.toPlainString() + " USD");
                    }
                    if (reserved.compareTo(attemptsReserved) != 0) {
                        found.add(window + ": " + reserved.toPlainString() + " USD reserved, but its attempts'"
                                + " open reservations hold " + attemptsReserved.toPlainString() + " USD");
                    }
                });
        figures.put("money budgets", windows.isEmpty() ? "none set" : String.join("; ", windows));
    }

    /**
     * Issue 34's webhooks: the receivers' log against the jobs that ended ({@link WebhookChecks}), and no
     * delivery the api gave up on (the soak runs far shorter than its give-up time).
     */
    private void webhooks() throws SQLException {
        List<WebhookChecks.EndedJob> ended = new ArrayList<>();
        rows(
                "SELECT id, owner_id, state FROM job WHERE state = ANY(?) ORDER BY id",
                rs -> ended.add(new WebhookChecks.EndedJob(rs.getString(1), rs.getString(2), rs.getString(3))),
                States.TERMINAL_JOBS);
        Map<WebhookChecks.Key, String> deliveries = new HashMap<>();
        List<String> failed = violations.get(Invariant.WEBHOOK_DELIVERY_FAILED);
        rows(
                "SELECT endpoint_id, job_id, type, webhook_id, state, attempts, last_status, last_error"
                        + " FROM webhook_delivery WHERE job_id IS NOT NULL ORDER BY id",
                rs -> {
                    String row = rs.getString(4) + " " + rs.getString(5) + " after " + rs.getInt(6) + " tries, last "
                            + (rs.getObject(7) == null ? "no answer" : "answered " + rs.getInt(7))
                            + (rs.getString(8) == null ? "" : " (" + rs.getString(8) + ")");
                    deliveries.put(new WebhookChecks.Key(rs.getString(1), rs.getString(2), rs.getString(3)), row);
                    if (rs.getString(5).equals("failed")) {
                        failed.add("job " + rs.getString(2) + ": " + rs.getString(3) + " to endpoint " + rs.getString(1)
                                + ": " + row);
                    }
                });
        figures.put(
                "webhook_delivery rows by state",
                countsBy("SELECT state, count(*) FROM webhook_delivery GROUP BY state"));
        WebhookChecks.Found found = WebhookChecks.check(
                inputs.webhooks().endpoints(), inputs.webhooks().received(), ended, deliveries);
        figures.putAll(found.figures());
        violations.get(Invariant.WEBHOOK_EVENT_LOST).addAll(found.lost());
        violations.get(Invariant.WEBHOOK_EVENT_TWICE).addAll(found.twice());
        violations.get(Invariant.WEBHOOK_SIGNATURE_INVALID).addAll(found.invalid());
    }

    private interface RowHandler {
        void row(ResultSet rs) throws SQLException;
    }

    /** Runs {@code sql}; {@code states}, when given, is its one parameter, a state set bound as a text array. */
    private void rows(String sql, RowHandler handler, String... states) throws SQLException {
        try (PreparedStatement statement = db.prepareStatement(sql)) {
            if (states.length > 0) {
                statement.setArray(1, db.createArrayOf("text", states));
            }
            try (ResultSet rs = statement.executeQuery()) {
                while (rs.next()) {
                    handler.row(rs);
                }
            }
        }
    }

    private long single(String sql, String... states) throws SQLException {
        long[] value = new long[1];
        rows(sql, rs -> value[0] = rs.getLong(1), states);
        return value[0];
    }

    private Map<String, Long> countsBy(String sql) throws SQLException {
        Map<String, Long> counts = new TreeMap<>();
        rows(sql, rs -> counts.put(rs.getString(1), rs.getLong(2)));
        return counts;
    }
}
