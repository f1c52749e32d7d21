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
 * state passes (with a poison message in the DLQ and a superseded attempt's late, billed result); each kind
 * of anomaly is counted under its invariant.
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
    private final List<String> poisonMessages = new ArrayList<>();
    private final List<WebhookReceiver.Received> webhookRequests = new ArrayList<>();

    // A consistent end state: one completed job with its commit, one in review, one cancelled.
    private final UUID completedJob = UUID.randomUUID();
    private final UUID winner = UUID.randomUUID();
    private final UUID reviewJob = UUID.randomUUID();
    private final UUID unknownAttempt = UUID.randomUUID();
    private final UUID cancelledJob = UUID.randomUUID();
    private final UUID lostAttempt = UUID.randomUUID();
    private final UUID aliceEndpoint = UUID.randomUUID();

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
        generation(winner, "now() - interval '1 minute'");
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
        // A late result of a superseded attempt: stored and billed, set aside on purpose.
        generation(lostAttempt, "now()");
        usage(lostAttempt, 3, 4);
        providerLog.add(new Checker.ProviderRequest(lostAttempt.toString(), 200, 3, 4));

        // The soak's poison message sits in the DLQ, as it must.
        String poison = Poison.body(42, 1);
        poisonMessages.add(poison);
        deadLetters.add(new Checker.DeadLetter("p1", null, null, poison, "delivery_limit"));

        // alice's webhook endpoint was sent the ends of her two jobs, and answered them.
        sql("INSERT INTO webhook_endpoint (id, owner_id, url, event_types, secret, created_at) VALUES ('"
                + aliceEndpoint + "', 'alice', 'http://127.0.0.1:1/chaos-webhooks/alice-1',"
                + " ARRAY['job.completed', 'job.cancelled'], 'whsec_a', now())");
        webhookRequest("msg_1", "job.completed", completedJob);
        webhookRequest("msg_2", "job.cancelled", cancelledJob);

        pendingDeadLetters(1);
        queueDepths.putAll(Map.of("jobs.attempts", 0L, "jobs.attempts.parked", 0L, "jobs.attempts.dead-letters", 0L));
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
    void stuckAttemptsUnknownJobsAndUndrainedQueuesAreLostIntentions() throws Exception {
        UUID stalled = UUID.randomUUID();
        job(stalled, "dave", "key-5", "running");
        UUID stuck = UUID.randomUUID();
        attempt(stuck, stalled, "starting");
        ownerByJob.put(UUID.randomUUID().toString(), "erin");
        queueDepths.put("jobs.attempts.parked", 2L);

        assertThat(check().violations().get(Invariant.NO_INTENTION_LOST))
                .hasSize(3)
                .contains(
                        "attempt " + stuck + " of job " + stalled + " is still starting",
                        "2 messages still in jobs.attempts.parked");
    }

    @Test
    void workQueueDeletedAndNeverDeclaredAgainIsALostIntention() throws Exception {
        queueDepths.remove("jobs.attempts");

        assertThat(check().violations().get(Invariant.NO_INTENTION_LOST))
                .containsExactly("queue jobs.attempts does not exist: deleted and never declared again");
    }

    @Test
    void acceptedRunningUnexplainedAndAttemptlessJobsAreNotSettled() throws Exception {
        UUID running = UUID.randomUUID();
        job(running, "dave", "key-5", "running");
        attempt(UUID.randomUUID(), running, "succeeded");
        sql("INSERT INTO applied_patch (idem_key, job_id, attempt_id, scope, status, created_at) SELECT 'k5', '"
                + running + "', id, 'git', 'pending', now() FROM attempt WHERE job_id = '" + running + "'");
        UUID accepted = UUID.randomUUID();
        job(accepted, "carol", "key-6", "accepted");
        UUID empty = UUID.randomUUID();
        job(empty, "carol", "key-7", "cancelled");
        sql("UPDATE job SET review_reason = ' ' WHERE id = '" + reviewJob + "'");

        List<String> found = check().violations().get(Invariant.EVERY_JOB_SETTLED);

        assertThat(found)
                .containsExactlyInAnyOrder(
                        "job " + running + " ended running (attempts: succeeded; apply pending)",
                        "job " + accepted + " ended accepted (attempts: none)",
                        "job " + reviewJob + " ended needs_review without a recorded reason (attempts: unknown)",
                        "job " + empty + " (cancelled) has no attempt at all");
    }

    @Test
    void deadLetterOfAHealthyAttemptOrAMissingPoisonMessageIsUnaccounted() throws Exception {
        UUID stuck = UUID.randomUUID();
        attempt(stuck, reviewJob, "starting");
        deadLetters.add(new Checker.DeadLetter("1", stuck.toString(), reviewJob.toString(), "{}", "delivery_limit"));
        deadLetters.add(
                new Checker.DeadLetter("2", unknownAttempt.toString(), reviewJob.toString(), "{}", "delivery_limit"));
        String lostPoison = Poison.body(42, 2);
        poisonMessages.add(lostPoison);
        pendingDeadLetters(3); // 4 pending rows in all

        assertThat(check().violations().get(Invariant.DEAD_LETTERS_ACCOUNTED))
                .containsExactlyInAnyOrder(
                        "dead_letter holds 4 pending rows, GET /admin/dlq listed 3",
                        "dead letter 1 is not a deliberately poisoned message: attempt " + stuck
                                + " (starting: nothing will ever work on it) of job " + reviewJob
                                + ", reason delivery_limit",
                        "dead letter 2 is not a deliberately poisoned message: attempt " + unknownAttempt
                                + " (unknown) of job " + reviewJob + ", reason delivery_limit",
                        "poison message \"" + lostPoison + "\" is not in the DLQ");
    }

    @Test
    void paidResultLeftUnknownOrArrivedBeforeTheCancelIsStranded() throws Exception {
        // The reviewed job's unknown attempt has its answer stored and billed, and nobody elects it.
        generation(unknownAttempt, "now()");
        usage(unknownAttempt, 5, 6);
        providerLog.add(new Checker.ProviderRequest(unknownAttempt.toString(), 200, 5, 6));
        // A cancelled job: one answer arrived after the cancel (fine), one before it (stranded).
        UUID closed = UUID.randomUUID();
        job(closed, "carol", "key-8", "cancelled");
        sql("INSERT INTO job_event (job_id, at, kind) VALUES ('" + closed + "', now() - interval '1 minute',"
                + " 'job.cancelled')");
        UUID late = UUID.randomUUID();
        attempt(late, closed, "unknown");
        generation(late, "now()");
        usage(late, 1, 2);
        UUID early = UUID.randomUUID();
        attempt(early, closed, "unknown");
        generation(early, "now() - interval '2 minutes'");
        usage(early, 1, 2);
        providerLog.add(new Checker.ProviderRequest(late.toString(), 200, 1, 2));
        providerLog.add(new Checker.ProviderRequest(early.toString(), 200, 1, 2));
        // A winner whose patch the target refused for good: failed with that reason, set aside on purpose.
        UUID refused = UUID.randomUUID();
        attempt(refused, reviewJob, "failed");
        sql("UPDATE attempt SET reason = 'apply refused by the target: base ref ''x'' does not exist'" + " WHERE id = '"
                + refused + "'");
        generation(refused, "now()");
        usage(refused, 3, 4);
        providerLog.add(new Checker.ProviderRequest(refused.toString(), 200, 3, 4));

        assertThat(check().violations().get(Invariant.PAID_RESULTS_USED))
                .containsExactlyInAnyOrder(
                        "attempt " + unknownAttempt + " of job " + reviewJob + " (attempt unknown, job needs_review)"
                                + " has a stored, provider-billed output that is not the winner and was not"
                                + " superseded",
                        "attempt " + early + " of job " + closed + " (attempt unknown, job cancelled) has a stored,"
                                + " provider-billed output that is not the winner and was not superseded; the job"
                                + " was closed after that output arrived");
    }

    @Test
    void providerReportedTokensMissingFromTheLedgerAndAppliedUnknownUsageAreCounted() throws Exception {
        providerLog.add(new Checker.ProviderRequest(unknownAttempt.toString(), 200, 7, 9));
        sql("UPDATE usage_record SET source = 'unknown', prompt_tokens = NULL, completion_tokens = NULL"
                + " WHERE attempt_id = '" + winner + "'");

        assertThat(check().violations().get(Invariant.USAGE_ACCOUNTED))
                .containsExactlyInAnyOrder(
                        "job " + completedJob + ": applied attempt " + winner + " has usage unknown",
                        "attempt " + winner
                                + ": the provider reported 12+40 tokens, usage_record has unknown null+null",
                        "attempt " + unknownAttempt + ": the provider reported 7+9 tokens, usage_record has nothing");
    }

    /**
     * A webhook delivery the api gave up on is counted, and so is the end it never brought to the receiver,
     * with what webhook_delivery says of it.
     */
    @Test
    void aWebhookDeliveryGivenUpIsFailedAndItsEndLost() throws Exception {
        webhookRequests.removeIf(r -> r.webhookId().equals("msg_2"));
        sql("INSERT INTO webhook_delivery (webhook_id, endpoint_id, job_id, type, state, attempts, last_status)"
                + " VALUES ('msg_2', '" + aliceEndpoint + "', '" + cancelledJob + "', 'job.cancelled', 'failed', 9,"
                + " 500)");

        Checker.Result result = check();

        String row = "msg_2 failed after 9 tries, last answered 500";
        assertThat(result.violations().get(Invariant.WEBHOOK_DELIVERY_FAILED))
                .containsExactly("job " + cancelledJob + ": job.cancelled to endpoint " + aliceEndpoint + ": " + row);
        assertThat(result.violations().get(Invariant.WEBHOOK_EVENT_LOST))
                .containsExactly("job " + cancelledJob + " (alice, cancelled): job.cancelled never answered 2xx at"
                        + " endpoint " + aliceEndpoint + " (/chaos-webhooks/alice-1); webhook_delivery: " + row);
    }

    private void webhookRequest(String webhookId, String type, UUID job) {
        webhookRequests.add(new WebhookReceiver.Received(
                aliceEndpoint.toString(), webhookId, type, job.toString(), 1L, null, 204, 0, "2026-12-04T00:00:00Z"));
    }

    private Checker.Result check() throws Exception {
        ClientLedger.Saved ledger =
                new ClientLedger.Saved(jobIdsByOwnerKey, ownerByJob, Map.of(), Map.of(), List.of(), poisonMessages);
        WebhookReceiver.Log webhooks = new WebhookReceiver.Log(
                List.of(new WebhookReceiver.Endpoint(
                        aliceEndpoint.toString(), "alice", "/chaos-webhooks/alice-1", "whsec_a")),
                webhookRequests);
        return Checker.check(
                db, new Checker.Inputs(ledger, providerLog, repository, deadLetters, queueDepths, webhooks));
    }

    private void job(UUID id, String owner, String key, String state) throws SQLException {
        sql("INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider, state, created_at,"
                + " updated_at) VALUES ('" + id + "', '" + owner + "', '" + key + "', 'sha256:in', '{}', 'fake-a', '"
                + state + "', now(), now())");
        jobIdsByOwnerKey.put(owner + " " + key, Set.of(id.toString()));
        ownerByJob.put(id.toString(), owner);
    }

    /**
     * Rule 20's invariant: a budget window whose settled spend passed its limit, or whose spend or reservation
     * differs from what its attempts cost and hold, is counted; dave's window with one settled call and one
     * open reservation, in step, is not.
     */
    @Test
    void aBudgetSpentPastItsLimitOrOutOfStepWithItsAttemptsIsCounted() throws Exception {
        UUID settled = aBudgetedCall("0.002", "0.05");
        sql("INSERT INTO usage_record (attempt_id, owner_id, provider, prompt_tokens, completion_tokens, source,"
                + " recorded_at) VALUES ('" + settled + "', 'dave', 'fake-a', 1000, 0, 'provider_reported', now())");
        UUID open = aBudgetedCall("0.003", "0.05");
        assertThat(check().violations().get(Invariant.SPEND_WITHIN_BUDGET)).isEmpty();

        // A settlement counted twice, and a reservation released without its attempt knowing.
        sql("UPDATE spend_window SET spent_usd = spent_usd + 0.001, reserved_usd = 0");
        String window = "dave's day budget from " + text("SELECT starts_on FROM spend_window");
        assertThat(check().violations().get(Invariant.SPEND_WITHIN_BUDGET))
                .containsExactlyInAnyOrder(
                        window + ": 0.004000 USD spent, but its attempts cost 0.003000 USD",
                        window + ": 0.000000 USD reserved, but its attempts' open reservations hold 0.003000 USD");

        sql("UPDATE spend_budget SET limit_usd = 0.0035");
        sql("UPDATE attempt SET reservation_open = false WHERE id = '" + open + "'");
        assertThat(check().violations().get(Invariant.SPEND_WITHIN_BUDGET))
                .containsExactly(
                        window + ": 0.004000 USD settled, past its limit of 0.003500 USD",
                        window + ": 0.004000 USD spent, but its attempts cost 0.003000 USD");
    }

    /**
     * A claim of dave's under a day budget of {@code limit}: a priced attempt reserving {@code reserved}
     * in the window, as the worker's claim does (the usage, when recorded, settles it by the trigger).
     */
    private UUID aBudgetedCall(String reserved, String limit) throws SQLException {
        sql("INSERT INTO spend_budget (owner_id, period, limit_usd, soft_percent, set_by, set_at, reason)"
                + " VALUES ('dave', 'day', " + limit + ", 80, 'otto', now(), 'test') ON CONFLICT DO NOTHING");
        sql("INSERT INTO spend_window (owner_id, period, starts_on) VALUES ('dave', 'day',"
                + " (now() AT TIME ZONE 'UTC')::date) ON CONFLICT DO NOTHING");
        sql("INSERT INTO provider_price (provider, model, input_usd_per_mtok, output_usd_per_mtok, effective_from,"
                + " set_by, reason) SELECT 'fake-a', 'fake-a', 3, 15, now() - interval '1 minute', 'otto', 'test'"
                + " WHERE NOT EXISTS (SELECT 1 FROM provider_price)");
        UUID job = UUID.randomUUID();
        job(job, "dave", "key-" + job, "cancelled");
        UUID attempt = UUID.randomUUID();
        attempt(attempt, job, "superseded");
        sql("UPDATE attempt SET sent_at = now(), price_id = (SELECT id FROM provider_price), reserved_usd = " + reserved
                + ", reserved_in = ARRAY['day'], reservation_open = true WHERE id = '" + attempt + "'");
        sql("UPDATE spend_window SET reserved_usd = reserved_usd + " + reserved);
        return attempt;
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

    /** The attempt's stored output, written at {@code at} (an SQL timestamp expression). */
    private void generation(UUID attempt, String at) throws SQLException {
        sql("INSERT INTO generation (attempt_id, patch, output_digest, created_at) VALUES ('" + attempt
                + "', 'diff'::bytea, 'sha256:out', " + at + ")");
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

    /** Pending rows of the dead-letter table (the mover's), which the invariant counts. */
    private void pendingDeadLetters(int rows) throws SQLException {
        sql("INSERT INTO dead_letter (message_key, dead_lettered_at, source_queue, body) SELECT"
                + " 'test-' || gen_random_uuid(), now(), 'jobs.attempts.dead-letters', convert_to('x', 'UTF8')"
                + " FROM generate_series(1, " + rows + ")");
    }

    private void sql(String statement) throws SQLException {
        try (Statement s = db.createStatement()) {
            s.execute(statement);
        }
    }

    private String text(String query) throws SQLException {
        try (Statement s = db.createStatement();
                var rs = s.executeQuery(query)) {
            rs.next();
            return rs.getString(1);
        }
    }
}
