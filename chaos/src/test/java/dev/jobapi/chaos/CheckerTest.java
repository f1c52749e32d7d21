package dev.jobapi.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.jobapi.chaos.Checker.Invariant;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.eclipse.jgit.api.Git;
import org.eclipse.jgit.revwalk.RevCommit;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The checker over crafted states: the services' real schema (common's migrations, in a schema of its
 * own in the test database), a real git repository and hand-made client and provider logs. A consistent
 * state passes; each kind of anomaly is counted under its invariant.
 */
class CheckerTest {

    private static final String SCHEMA = "chaos_checker_test";
    private static final String URL =
            System.getenv().getOrDefault("JOBAPI_TEST_DB_URL", "jdbc:postgresql://127.0.0.1:5432/jobapi_test");

    @TempDir
    Path repository;

    private Connection db;
    private Git git;
    private RevCommit main;
    private final Map<String, Set<String>> jobIdsByOwnerKey = new HashMap<>();
    private final Map<String, String> ownerByJob = new HashMap<>();
    private final List<Checker.ProviderRequest> providerLog = new ArrayList<>();
    private final List<Checker.DeadLetter> deadLetters = new ArrayList<>();
    private final Map<String, Long> queueDepths = new HashMap<>();

    // A consistent end state: one completed job with its commit, one in review, one cancelled.
    private final UUID completedJob = UUID.randomUUID();
    private final UUID winner = UUID.randomUUID();
    private final UUID reviewJob = UUID.randomUUID();
    private final UUID unknownAttempt = UUID.randomUUID();
    private final UUID cancelledJob = UUID.randomUUID();
    private final UUID lostAttempt = UUID.randomUUID();

    @BeforeEach
    void consistentState() throws Exception {
        Flyway flyway = Flyway.configure()
                .dataSource(URL, "jobapi", "jobapi")
                .schemas(SCHEMA)
                .locations("classpath:db/migration")
                .cleanDisabled(false)
                .load();
        flyway.clean();
        flyway.migrate();
        db = DriverManager.getConnection(URL, "jobapi", "jobapi");
        sql("SET search_path TO " + SCHEMA);

        git = Git.init()
                .setDirectory(repository.toFile())
                .setInitialBranch("main")
                .call();
        main = commit("initial");

        job(completedJob, "alice", "key-1", "running");
        attempt(winner, completedJob, "succeeded");
        sql("UPDATE job SET state = 'completed', winning_attempt_id = '" + winner + "' WHERE id = '" + completedJob
                + "'");
        usage(winner, 12, 40);
        providerLog.add(new Checker.ProviderRequest(winner.toString(), 200, 12, 40));
        String sha = branchCommit(completedJob, "apply-key-1");
        sql("INSERT INTO applied_patch (idem_key, job_id, attempt_id, scope, status, target_ref, created_at,"
                + " applied_at) VALUES ('apply-key-1', '" + completedJob + "', '" + winner + "', 'git', 'applied', '"
                + sha + "', now(), now())");

        job(reviewJob, "bob", "key-2", "needs_review");
        sql("UPDATE job SET review_reason = 'attempt timed out' WHERE id = '" + reviewJob + "'");
        attempt(unknownAttempt, reviewJob, "unknown");

        job(cancelledJob, "alice", "key-3", "cancelled");
        attempt(lostAttempt, cancelledJob, "superseded");
        providerLog.add(new Checker.ProviderRequest(lostAttempt.toString(), 502, null, null));

        queueDepths.putAll(Map.of("jobs.attempts", 0L, "jobs.attempts.delay", 0L, "jobs.attempts.dlq", 0L));
    }

    @AfterEach
    void close() throws SQLException {
        git.close();
        db.close();
    }

    @Test
    void consistentStatePasses() throws Exception {
        Checker.Result result = check();

        assertThat(result.clean()).as("%s", result.violations()).isTrue();
        assertThat(result.figures())
                .containsEntry("applied_patch rows (applied)", 1L)
                .containsEntry("completed jobs", 1L)
                .containsEntry("commits on jobapi/* branches", 1L);
    }

    @Test
    void secondCommitOnABranchIsADuplicateApply() throws Exception {
        git.checkout().setName("jobapi/" + completedJob).call();
        commit("Apply again\n\nIdempotency-Key: apply-key-1\n");

        assertThat(check().violations().get(Invariant.APPLY_MATCHES_COMMITS))
                .containsExactly("branch jobapi/" + completedJob + " has 2 commits, not 1");
    }

    @Test
    void commitWithoutAnAppliedPatchRowAndCompletedJobWithoutCommitAreCounted() throws Exception {
        UUID other = UUID.randomUUID();
        job(other, "carol", "key-4", "cancelled");
        branchCommit(other, "apply-key-4");
        sql("UPDATE job SET state = 'running' WHERE id = '" + completedJob + "'");

        assertThat(check().violations().get(Invariant.APPLY_MATCHES_COMMITS))
                .containsExactlyInAnyOrder(
                        "applied_patch of job " + completedJob + " (status applied) but the job is not completed",
                        "branch jobapi/" + other + " has commits but the job has no applied_patch row");
    }

    @Test
    void secondSucceededAttemptIsASecondWinner() throws Exception {
        UUID second = UUID.randomUUID();
        attempt(second, completedJob, "succeeded");

        assertThat(check().violations().get(Invariant.ONE_JOB_ONE_WINNER))
                .containsExactlyInAnyOrder(
                        "job " + completedJob + " has 2 succeeded attempts",
                        "job " + completedJob + ": succeeded attempt " + second + " is not its winning_attempt_id");
    }

    @Test
    void twoJobsAnsweredForOneKeyAreCounted() throws Exception {
        jobIdsByOwnerKey.put("alice key-1", Set.of(completedJob.toString(), cancelledJob.toString()));

        assertThat(check().violations().get(Invariant.ONE_JOB_ONE_WINNER)).hasSize(1);
    }

    @Test
    void stalledJobsStuckAttemptsAndUndrainedQueuesAreLostIntentions() throws Exception {
        UUID stalled = UUID.randomUUID();
        job(stalled, "dave", "key-5", "running");
        UUID stuck = UUID.randomUUID();
        attempt(stuck, stalled, "starting");
        sql("UPDATE job SET review_reason = NULL WHERE id = '" + reviewJob + "'");
        ownerByJob.put(UUID.randomUUID().toString(), "erin");
        queueDepths.put("jobs.attempts.delay", 2L);

        assertThat(check().violations().get(Invariant.NO_INTENTION_LOST))
                .hasSize(5)
                .contains(
                        "job " + stalled + " ended running",
                        "job " + reviewJob + " ended needs_review without a recorded reason",
                        "attempt " + stuck + " of job " + stalled + " is still starting",
                        "2 messages still in jobs.attempts.delay");
    }

    @Test
    void providerReportedTokensMissingFromTheLedgerAndAppliedUnknownUsageAreCounted() throws Exception {
        providerLog.add(new Checker.ProviderRequest(unknownAttempt.toString(), 200, 7, 9));
        sql("UPDATE usage_record SET source = 'unknown', prompt_tokens = NULL, completion_tokens = NULL");

        assertThat(check().violations().get(Invariant.USAGE_ACCOUNTED))
                .containsExactlyInAnyOrder(
                        "job " + completedJob + ": applied attempt " + winner + " has usage unknown",
                        "attempt " + winner
                                + ": the provider reported 12+40 tokens, usage_record has unknown null+null",
                        "attempt " + unknownAttempt + ": the provider reported 7+9 tokens, usage_record has nothing");
    }

    @Test
    void deadLetterOfAStartingAttemptOrOneNotListedIsUnaccounted() throws Exception {
        UUID stuck = UUID.randomUUID();
        attempt(stuck, reviewJob, "starting");
        deadLetters.add(new Checker.DeadLetter("1", stuck.toString()));
        deadLetters.add(new Checker.DeadLetter("2", unknownAttempt.toString()));
        queueDepths.put("jobs.attempts.dlq", 3L);

        assertThat(check().violations().get(Invariant.DEAD_LETTERS_ACCOUNTED))
                .containsExactlyInAnyOrder(
                        "jobs.attempts.dlq holds 3 messages, GET /admin/dlq listed 2",
                        "dead letter 1: attempt " + stuck + " is still starting, nothing will ever work on it");
    }

    private Checker.Result check() throws Exception {
        ClientLedger.Saved ledger = new ClientLedger.Saved(jobIdsByOwnerKey, ownerByJob, Map.of(), Map.of(), List.of());
        return Checker.check(db, new Checker.Inputs(ledger, providerLog, repository, deadLetters, queueDepths));
    }

    private void job(UUID id, String owner, String key, String state) throws SQLException {
        sql("INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider, state, created_at,"
                + " updated_at) VALUES ('" + id + "', '" + owner + "', '" + key + "', 'sha256:in', '{}', 'fake-a', '"
                + state + "', now(), now())");
        jobIdsByOwnerKey.put(owner + " " + key, Set.of(id.toString()));
        ownerByJob.put(id.toString(), owner);
    }

    private void attempt(UUID id, UUID job, String state) throws SQLException {
        sql("INSERT INTO attempt (id, job_id, provider, state, request_key, output_digest, created_at, updated_at)"
                + " VALUES ('" + id + "', '" + job + "', 'fake-a', '" + state + "', 'rk-" + id
                + "', 'sha256:out', now(), now())");
    }

    private void usage(UUID attempt, int prompt, int completion) throws SQLException {
        sql("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source,"
                + " recorded_at) VALUES ('" + attempt + "', 'alice', 'fake-a', " + prompt + ", " + completion
                + ", 'provider_reported', now())");
    }

    /** A branch jobapi/JOB off main with one commit carrying the apply key; returns its sha. */
    private String branchCommit(UUID job, String applyKey) throws Exception {
        git.checkout().setName("main").call();
        git.checkout()
                .setCreateBranch(true)
                .setName("jobapi/" + job)
                .setStartPoint(main)
                .call();
        String sha = commit("Apply job " + job + "\n\nIdempotency-Key: " + applyKey + "\n")
                .getName();
        git.checkout().setName("main").call();
        return sha;
    }

    private RevCommit commit(String message) throws Exception {
        File file = repository.resolve("counter.txt").toFile();
        Files.writeString(file.toPath(), message);
        git.add().addFilepattern("counter.txt").call();
        return git.commit()
                .setMessage(message)
                .setAuthor("chaos test", "test@jobapi.invalid")
                .setCommitter("chaos test", "test@jobapi.invalid")
                .setSign(false)
                .call();
    }

    private void sql(String statement) throws SQLException {
        try (Statement s = db.createStatement()) {
            s.execute(statement);
        }
    }
}
