package dev.jobapi.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
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

    private UUID aJob() {
        return UUID.fromString(createJob(Tokens.user("alice"), "events-" + UUID.randomUUID(), JOB_BODY)
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
