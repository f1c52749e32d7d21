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
 * The five invariants of issue 8, checked after the drain over the database (JDBC), the client's
 * ledger, the fake provider's own request log, the target git repository and the dead-letter queue.
 * Each violation is one line naming what broke and the ids to look up.
 */
final class Checker {

    enum Invariant {
        ONE_JOB_ONE_WINNER("one job per (owner, key); never two winners for a job"),
        APPLY_MATCHES_COMMITS("applied_patch rows = completed jobs = commits on the target branches"),
        NO_INTENTION_LOST("no intention lost: every job completed, cancelled or in review with a reason;"
                + " no attempt starting without a message on its way; outbox and queue drained"),
        USAGE_ACCOUNTED("no applied attempt with unknown usage; every provider-reported token in usage_record"),
        DEAD_LETTERS_ACCOUNTED("every dead-lettered message accounted for (listed; its attempt terminal or unknown)");

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
    record DeadLetter(String id, String attemptId) {}

    record Inputs(
            ClientLedger.Saved ledger,
            List<ProviderRequest> providerLog,
            Path gitRepository,
            List<DeadLetter> deadLetters,
            Map<String, Long> queueDepths) {}

    /** Violations per invariant (every invariant present, maybe empty) and the figures of the report. */
    record Result(Map<Invariant, List<String>> violations, Map<String, Object> figures) {
        boolean clean() {
            return violations.values().stream().allMatch(List::isEmpty);
        }
    }

    static final String WORK_QUEUE = "jobs.attempts";
    static final String DELAY_QUEUE = "jobs.attempts.delay";
    static final String DEAD_LETTER_QUEUE = "jobs.attempts.dlq";
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
        return new Result(checker.violations, checker.figures);
    }

    private void figures() throws SQLException {
        figures.put("jobs by state", countsBy("SELECT state, count(*) FROM job GROUP BY state"));
        figures.put("attempts by state", countsBy("SELECT state, count(*) FROM attempt GROUP BY state"));
        figures.put("quarantined attempts (usage missing)", single("SELECT count(*) FROM attempt WHERE quarantined"));
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
                "SELECT id, state, review_reason FROM job WHERE state NOT IN ('completed', 'cancelled')"
                        + " AND NOT (state = 'needs_review' AND coalesce(btrim(review_reason), '') <> '') ORDER BY id",
                rs -> found.add("job " + rs.getString(1) + " ended " + rs.getString(2)
                        + (rs.getString(2).equals("needs_review") ? " without a recorded reason" : "")));
        rows(
                "SELECT a.id, a.job_id, EXISTS (SELECT 1 FROM outbox o WHERE o.attempt_id = a.id AND o.sent_at IS NULL)"
                        + " FROM attempt a WHERE a.state = 'starting' ORDER BY a.id",
                rs -> found.add("attempt " + rs.getString(1) + " of job " + rs.getString(2) + " is still starting"
                        + (rs.getBoolean(3) ? " (its outbox row is unsent)" : "")));
        long unsent = single("SELECT count(*) FROM outbox WHERE sent_at IS NULL");
        if (unsent > 0) {
            found.add(unsent + " outbox rows never sent");
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

    private void deadLettersAccounted() throws SQLException {
        List<String> found = violations.get(Invariant.DEAD_LETTERS_ACCOUNTED);
        long depth = inputs.queueDepths().getOrDefault(DEAD_LETTER_QUEUE, 0L);
        figures.put("dead-lettered messages", depth);
        if (depth != inputs.deadLetters().size()) {
            found.add(DEAD_LETTER_QUEUE + " holds " + depth + " messages, GET /admin/dlq listed "
                    + inputs.deadLetters().size());
        }
        Map<String, String> attemptStates = new HashMap<>();
        rows("SELECT id, state FROM attempt", rs -> attemptStates.put(rs.getString(1), rs.getString(2)));
        for (DeadLetter letter : inputs.deadLetters()) {
            String state = letter.attemptId() == null ? null : attemptStates.get(letter.attemptId());
            if (state == null) {
                found.add("dead letter " + letter.id() + " names no known attempt (" + letter.attemptId() + ")");
            } else if (state.equals("starting")) {
                found.add("dead letter " + letter.id() + ": attempt " + letter.attemptId()
                        + " is still starting, nothing will ever work on it");
            }
        }
    }

    private interface RowHandler {
        void row(ResultSet rs) throws SQLException;
    }

    private void rows(String sql, RowHandler handler) throws SQLException {
        try (PreparedStatement statement = db.prepareStatement(sql);
                ResultSet rs = statement.executeQuery()) {
            while (rs.next()) {
                handler.row(rs);
            }
        }
    }

    private long single(String sql) throws SQLException {
        try (PreparedStatement statement = db.prepareStatement(sql);
                ResultSet rs = statement.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private Map<String, Long> countsBy(String sql) throws SQLException {
        Map<String, Long> counts = new TreeMap<>();
        rows(sql, rs -> counts.put(rs.getString(1), rs.getLong(2)));
        return counts;
    }
}
