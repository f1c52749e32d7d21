package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.jobapi.common.database.PlainTransactions;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A job's timeline holds an event exactly when the change it describes committed: JobEvents writes a
 * transaction's events together just before the commit, so the rule rests on that write joining the
 * transaction, in the order the events were recorded.
 */
@QuarkusTest
class JobEventsTest extends ApiTestSupport {

    @Inject
    JobEvents events;

    @Inject
    PlainTransactions plainTransactions;

    @Test
    void theEventsOfACommittedTransactionAreOnTheTimelineInTheOrderTheyWereRecorded() {
        UUID job = aJob();

        QuarkusTransaction.requiringNew().run(() -> {
            events.record(job, null, JobEventKind.JOB_NEEDS_REVIEW, "first");
            events.record(
                    job,
                    List.of(
                            new JobEvents.Event(null, JobEventKind.JOB_CANCELLED, "second"),
                            new JobEvents.Event(null, JobEventKind.JOB_COMPLETED, "third")));
        });

        assertThat(details(job)).containsExactly("first", "second", "third");
    }

    /** The rows go to the database as arrays: what an array's text would quote or escape comes back as recorded. */
    @Test
    void anEventsDetailIsWrittenAsRecordedWhateverItsCharacters() {
        UUID job = aJob();
        String detail = "a \"quoted\", {braced} \\ back-slashed, NULL, 'single' détail";

        QuarkusTransaction.requiringNew().run(() -> {
            events.record(job, null, JobEventKind.JOB_NEEDS_REVIEW, detail);
            events.record(job, null, JobEventKind.JOB_CANCELLED, null);
        });

        assertThat(text("SELECT detail FROM job_event WHERE job_id = '" + job + "' AND kind = '"
                        + JobEventKind.JOB_NEEDS_REVIEW.wireName() + "'"))
                .isEqualTo(detail);
        assertThat(count("SELECT count(*) FROM job_event WHERE job_id = '" + job + "' AND kind = '"
                        + JobEventKind.JOB_CANCELLED.wireName() + "' AND detail IS NULL AND attempt_id IS NULL"))
                .isEqualTo(1);
    }

    /**
     * One statement a transaction, so the table's statement trigger (the webhook deliveries) runs once
     * a transaction, not once an event. A trigger of the test's own logs each statement's rows.
     */
    @Test
    void aTransactionsEventsAreWrittenByOneStatement() {
        UUID job = aJob();
        execute("CREATE TABLE test_job_event_statement (job_id uuid, events bigint)");
        execute("CREATE FUNCTION test_log_job_event_statement() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                + " INSERT INTO test_job_event_statement SELECT job_id, count(*) FROM written GROUP BY job_id;"
                + " RETURN NULL; END $$");
        execute("CREATE TRIGGER test_job_event_statement AFTER INSERT ON job_event REFERENCING NEW TABLE AS written"
                + " FOR EACH STATEMENT EXECUTE FUNCTION test_log_job_event_statement()");
        try {
            QuarkusTransaction.requiringNew().run(() -> {
                events.record(job, null, JobEventKind.JOB_NEEDS_REVIEW, "first");
                events.record(job, null, JobEventKind.JOB_CANCELLED, "second");
                events.record(job, null, JobEventKind.JOB_COMPLETED, "third");
            });

            assertThat(text("SELECT string_agg(events::text, ',') FROM test_job_event_statement WHERE job_id = '" + job
                            + "'"))
                    .as("rows written by each statement of the transaction")
                    .isEqualTo("3");
        } finally {
            execute("DROP TRIGGER test_job_event_statement ON job_event");
            execute("DROP FUNCTION test_log_job_event_statement()");
            execute("DROP TABLE test_job_event_statement");
        }
    }

    /**
     * A connection plans the timeline's insert once and reuses the plan: given the arrays themselves,
     * PostgreSQL found a plan for their few rows cheaper than its generic one and planned every
     * execution anew, a tenth of the statements' time in the bench (bench/ANALYSIS.md). Each
     * transaction reads what its connection did before it: a thread gets its last connection back.
     */
    @Test
    void theTimelinesInsertIsPlannedOnceAConnectionNotAtEachTransaction() {
        UUID job = aJob();
        long genericPlans = 0;
        for (int transaction = 0; transaction < 30 && genericPlans == 0; transaction++) {
            genericPlans = plainTransactions.inTransaction("Timeline insert on one connection", connection -> {
                events.record(job, null, JobEventKind.JOB_NEEDS_REVIEW, "planned once");
                try (Statement query = connection.createStatement();
                        ResultSet plans = query.executeQuery("SELECT coalesce(sum(generic_plans), 0)"
                                + " FROM pg_prepared_statements WHERE statement LIKE 'INSERT INTO job_event %'")) {
                    plans.next();
                    return plans.getLong(1);
                }
            });
        }

        assertThat(genericPlans)
                .as("executions of the timeline's insert that reused its connection's generic plan")
                .isPositive();
    }

    @Test
    void aReplacedEventIsWrittenInItsPlaceAndOnlyThere() {
        UUID job = aJob();

        QuarkusTransaction.requiringNew().run(() -> {
            JobEvents.Recorded first = events.record(job, null, JobEventKind.JOB_NEEDS_REVIEW, "first");
            events.record(job, null, JobEventKind.JOB_CANCELLED, "second");
            first.replaceWith(JobEventKind.JOB_COMPLETED, "third");
        });

        assertThat(details(job)).containsExactly("third", "second");
        assertThat(text("SELECT kind FROM job_event WHERE job_id = '" + job + "' AND detail = 'third'"))
                .isEqualTo(JobEventKind.JOB_COMPLETED.wireName());
    }

    @Test
    void theEventsOfATransactionThatRollsBackAreNeverWritten() {
        UUID job = aJob();

        assertThatThrownBy(() -> QuarkusTransaction.requiringNew().run(() -> {
                    events.record(job, null, JobEventKind.JOB_CANCELLED, "rolled back");
                    throw new IllegalStateException("the change failed");
                }))
                .hasMessageContaining("the change failed");

        assertThat(details(job)).doesNotContain("rolled back");
        assertThat(count("SELECT count(*) FROM job_event WHERE job_id = '" + job + "'"))
                .as("intake's own two events, nothing else")
                .isEqualTo(2);
    }

    /**
     * Every timeline and outbox row carries its own job's owner, whoever wrote it: the feed's and the
     * webhooks' one-owner reads rest on it. Intake's statement and JobEvents take it from the job
     * (V32), here for two owners' jobs in one transaction; a writer that leaves it out gets it from
     * the trigger.
     */
    @Test
    void everyRowCarriesItsOwnJobsOwnerWhoeverWroteIt() {
        UUID alices = aJobOf("alice");
        UUID bobs = aJobOf("bob");

        QuarkusTransaction.requiringNew().run(() -> {
            events.record(alices, null, JobEventKind.JOB_NEEDS_REVIEW, "first");
            events.record(bobs, null, JobEventKind.JOB_NEEDS_REVIEW, "second");
        });
        execute("INSERT INTO job_event (job_id, at, kind, detail) VALUES ('" + bobs + "', now(), '"
                + JobEventKind.JOB_CANCELLED.wireName() + "', 'third')");

        for (UUID job : List.of(alices, bobs)) {
            String owner = job.equals(alices) ? "alice" : "bob";
            assertThat(count("SELECT count(*) FROM job_event WHERE job_id = '" + job + "'"))
                    .as("intake's two rows and the ones written here")
                    .isEqualTo(job.equals(alices) ? 3 : 4);
            assertThat(count("SELECT count(*) FROM job_event WHERE job_id = '" + job + "' AND owner_id = '" + owner
                            + "'"))
                    .as("rows of %s's job that carry %s as their owner", owner, owner)
                    .isEqualTo(job.equals(alices) ? 3 : 4);
            assertThat(text("SELECT string_agg(owner_id, ',') FROM outbox WHERE job_id = '" + job + "'"))
                    .isEqualTo(owner);
        }
    }

    /** A row of a job that does not exist is refused, and its transaction with it. */
    @Test
    void anEventOfAJobThatDoesNotExistIsRefused() {
        UUID nobodys = UUID.randomUUID();

        assertThatThrownBy(() -> QuarkusTransaction.requiringNew()
                        .run(() -> events.record(nobodys, null, JobEventKind.JOB_NEEDS_REVIEW, "first")))
                .isInstanceOf(RuntimeException.class);

        assertThat(count("SELECT count(*) FROM job_event WHERE job_id = '" + nobodys + "'"))
                .isZero();
    }

    private UUID aJob() {
        return aJobOf("alice");
    }

    private UUID aJobOf(String owner) {
        return UUID.fromString(createJob(Tokens.user(owner), "events-" + UUID.randomUUID(), JOB_BODY)
                .then()
                .statusCode(201)
                .extract()
                .path("id"));
    }

    private List<String> details(UUID job) {
        return QuarkusTransaction.requiringNew().call(() -> em.createNativeQuery(
                        "SELECT detail FROM job_event WHERE job_id = ?1 AND detail IN ('first', 'second', 'third',"
                                + " 'rolled back') ORDER BY id",
                        String.class)
                .setParameter(1, job)
                .getResultList());
    }
}
