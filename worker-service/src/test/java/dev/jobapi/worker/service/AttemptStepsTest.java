package dev.jobapi.worker.service;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.database.CurrentTransaction;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.worker.FakeProviderResource;
import dev.jobapi.worker.WorkerTestSupport;
import dev.jobapi.worker.fallback.AutomaticFallback;
import dev.jobapi.worker.repository.AttemptWork;
import io.quarkus.narayana.jta.QuarkusTransaction;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ObjIntConsumer;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.hibernate.SessionFactory;
import org.hibernate.engine.spi.SessionFactoryImplementor;
import org.hibernate.persister.entity.EntityPersister;
import org.junit.jupiter.api.Test;

/**
 * A step loads its attempt and job with plain SQL and writes back, each with its version checked,
 * only the rows its body changed, and of each only the columns a step may change: a row written for
 * nothing would raise its version and make a concurrent step on it run again for nothing, and a
 * column written back as loaded would undo a change made since that raised no version. On a
 * consumer's thread a step runs in a plain transaction, and again under JTA when it needs the ORM.
 */
@QuarkusTest
@QuarkusTestResource(value = FakeProviderResource.class, restrictToAnnotatedClass = true)
class AttemptStepsTest extends WorkerTestSupport {

    @Inject
    AttemptSteps steps;

    @Inject
    AttemptWork work;

    @Inject
    ClaimStep claim;

    @Inject
    AutomaticFallback fallback;

    @Inject
    AttemptRepository attempts;

    @Inject
    AttemptOutcomes outcomes;

    @Inject
    SessionFactory sessions;

    @Inject
    CurrentTransaction transaction;

    @Inject
    JobEvents events;

    @Test
    void aStepOnAConsumersThreadRunsInAPlainTransactionAndCommitsItsWritesAndEvents() {
        UUID job = aJob("a step in a plain transaction");
        UUID attempt = aStartingAttempt(job, "fake-a");

        boolean plain = onAConsumersThread(() -> steps.run(attempt, false, step -> {
            step.attempt().recordRemoteId("remote-plain", step.now());
            events.record(job, attempt, JobEventKind.MESSAGE_DELIVERED, "in a plain transaction");
            return transaction.inPlain();
        }));

        assertThat(plain).isTrue();
        assertThat(text("SELECT remote_id FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo("remote-plain");
        assertThat(count("SELECT count(*) FROM job_event WHERE attempt_id = '" + attempt
                        + "' AND detail = 'in a plain transaction'"))
                .isEqualTo(1);
    }

    @Test
    void aStepThatNeedsTheOrmInAPlainTransactionRunsAgainUnderJtaWithNothingOfItsPlainRunCommitted() {
        UUID job = aJob("a step that needs the ORM");
        UUID attempt = aStartingAttempt(job, "fake-a");
        List<Boolean> runsInPlain = new CopyOnWriteArrayList<>();

        String outcome = onAConsumersThread(() -> steps.run(attempt, "missing", step -> {
            runsInPlain.add(transaction.inPlain());
            step.attempt().recordRemoteId("remote-run-" + runsInPlain.size(), step.now());
            events.record(job, attempt, JobEventKind.MESSAGE_DELIVERED, "run " + runsInPlain.size());
            attempts.forJob(job); // a read through the ORM's session: a JTA transaction's only
            return "done";
        }));

        assertThat(outcome).isEqualTo("done");
        assertThat(runsInPlain).as("plain first, then under JTA").containsExactly(true, false);
        assertThat(text("SELECT remote_id FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo("remote-run-2");
        assertThat(text("SELECT string_agg(detail, ',') FROM job_event WHERE attempt_id = '" + attempt + "'"))
                .as("the plain run's event rolled back with it")
                .isEqualTo("run 2");
    }

    /**
     * The reads a step's rarer branches make (a redelivery finding the answer stored, rule 4's check
     * of the reported usage, a lease's liveness, a failure's fallback list and the job's other
     * attempts) stay in the plain transaction: through the ORM each cost the step a second run under
     * JTA.
     */
    @Test
    void aStepsReadsOfAStoredAnswerItsLeaseAndTheJobsOtherAttemptsStayInItsPlainTransaction() {
        UUID job = aJob("a step that reads what is stored");
        UUID attempt = aStartingAttempt(job, "fake-a");
        storeGeneration(attempt, "sha256:stored", "the stored patch");
        storeReportedUsage(attempt);
        List<Boolean> runsInPlain = new CopyOnWriteArrayList<>();

        String read = onAConsumersThread(() -> steps.run(attempt, "missing", step -> {
            runsInPlain.add(transaction.inPlain());
            AttemptWork.StoredOutput output = work.storedOutput(attempt).orElseThrow();
            Attempt failed = step.attempt();
            failed.fail("the provider refused it", step.now());
            boolean fellBack =
                    fallback.afterFailure(step.job(), failed, step.now()).isPresent();
            step.lockJob();
            outcomes.awaitOwnerIfNothingOpen(step);
            return String.join(
                    ",",
                    new String(output.patch(), StandardCharsets.UTF_8),
                    output.outputDigest(),
                    String.valueOf(work.outputStored(attempt)),
                    String.valueOf(work.usageReported(attempt)),
                    String.valueOf(work.leaseLive(attempt)),
                    String.valueOf(fellBack));
        }));

        assertThat(read).isEqualTo("the stored patch,sha256:stored,true,true,false,false");
        assertThat(runsInPlain).as("one run, plain").containsExactly(true);
        assertThat(attemptState(attempt)).isEqualTo("failed");
        assertThat(jobState(job))
                .as("nothing else open: the job waits for its owner")
                .isEqualTo("needs_review");
    }

    @Test
    void aStepThatChangesNothingWritesNeitherRow() {
        UUID job = aJob("a step that only reads");
        UUID attempt = aStartingAttempt(job, "fake-a");
        String before = versions(job, attempt);

        String seen = steps.run(
                attempt,
                "missing",
                step -> step.attempt().state().wireName() + " of "
                        + step.job().state().wireName());

        assertThat(seen).isEqualTo("starting of accepted");
        assertThat(versions(job, attempt)).isEqualTo(before);
    }

    @Test
    void aStepWritesTheRowItChangedAndOnlyThatOne() {
        UUID job = aJob("a step that changes its attempt");
        UUID attempt = aStartingAttempt(job, "fake-a");
        long jobVersion = count("SELECT version FROM job WHERE id = '" + job + "'");
        long attemptVersion = count("SELECT version FROM attempt WHERE id = '" + attempt + "'");

        steps.run(attempt, false, step -> {
            step.attempt().recordRemoteId("remote-7", step.now());
            return true;
        });

        assertThat(text("SELECT remote_id FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo("remote-7");
        assertThat(count("SELECT version FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo(attemptVersion + 1);
        assertThat(count("SELECT version FROM job WHERE id = '" + job + "'")).isEqualTo(jobVersion);
    }

    @Test
    void aChangedAttemptThatAnotherTransactionWroteSinceTheLoadRunsTheStepAgain() {
        UUID job = aJob("a step whose attempt changed since its load");
        UUID attempt = aStartingAttempt(job, "fake-a");

        // The concurrent write: a reviewer's note, say.
        int runs = runsOfAStepWrittenConcurrentlyInItsFirstRun(
                attempt,
                other -> other.attempt().recordRemoteId("remote-first", other.now()),
                (step, run) -> step.attempt().recordRemoteId("remote-second-run-" + run, step.now()));

        assertThat(runs).as("the stale write failed its version check").isEqualTo(2);
        assertThat(text("SELECT remote_id FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo("remote-second-run-2");
    }

    @Test
    void aStepsWriteLeavesALeaseRenewedSinceTheLoadAsRenewed() {
        UUID job = aJob("a step whose attempt had its lease renewed since the load");
        UUID attempt = aStartingAttempt(job, "fake-a");
        execute("UPDATE attempt SET lease_owner = 'worker-x', lease_expires_at = now() + interval '1 minute',"
                + " version = version + 1 WHERE id = '" + attempt + "'");

        steps.run(attempt, false, step -> {
            // The heartbeat of the call, committed between the load and the write; a renewal raises no
            // version, so nothing but the write's own columns keeps it.
            assertThat(QuarkusTransaction.requiringNew()
                            .call(() -> work.renewLease(attempt, "worker-x", Duration.ofHours(1))))
                    .isTrue();
            step.attempt().recordRemoteId("remote-after-renewal", step.now());
            return true;
        });

        assertThat(text("SELECT remote_id FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo("remote-after-renewal");
        assertThat(count("SELECT count(*) FROM attempt WHERE id = '" + attempt + "'"
                        + " AND lease_expires_at > now() + interval '30 minutes'"))
                .as("the renewal survives the step's write")
                .isEqualTo(1);
    }

    @Test
    void aStepWritesBackEveryColumnOfTheAttemptItChanged() {
        UUID job = aJob("a step that changes every column of its attempt");
        UUID attempt = aStartingAttempt(job, "fake-a");

        Attempt.Changeable written = steps.run(attempt, null, step -> {
            step.attempt().recordRemoteId("remote-every", step.now());
            step.attempt().recordOutput("sha256:every", step.now());
            step.attempt().supersede("replaced by a reviewer", "reviewer-9", step.now());
            return step.attempt().changeable();
        });

        assertWrittenBack(
                steps.run(attempt, null, step -> step.attempt().changeable()), written, Attempt.Changeable::updatedAt);
    }

    @Test
    void aChangedJobThatAnotherTransactionWroteSinceTheLoadRunsTheStepAgain() {
        UUID job = aJob("a step whose job changed since its load");
        UUID attempt = aStartingAttempt(job, "fake-a");

        // The concurrent write: a second attempt's claim, say.
        int runs = runsOfAStepWrittenConcurrentlyInItsFirstRun(
                attempt, other -> other.job().start(other.now()), (step, run) -> step.job()
                        .requireReview("looked at in run " + run, step.now()));

        assertThat(runs).as("the stale write failed its version check").isEqualTo(2);
        assertThat(text("SELECT review_reason FROM job WHERE id = '" + job + "'"))
                .isEqualTo("looked at in run 2");
    }

    @Test
    void aClaimStartsItsJobInItsOwnStatementAndTheStepDoesNotWriteTheJobAgain() {
        UUID job = aJob("a claim that starts its job");
        UUID attempt = aStartingAttempt(job, "fake-a");

        ClaimStep.Decision decision = steps.run(attempt, null, step -> claim.decide(step, false));

        assertThat(decision.next()).isEqualTo(ClaimStep.Next.CALL);
        assertThat(stateAndVersion(job))
                .as("started by the claim's statement, one version up, not written again at the step's end")
                .isEqualTo("running 1");
        assertThat(text("SELECT lease_owner IS NOT NULL FROM attempt WHERE id = '" + attempt + "'"))
                .isEqualTo("true");
    }

    @Test
    void aJobChangedInTheStepBeforeTheClaimIsNotTakenAsWrittenByTheClaim() {
        UUID job = aJob("a step that changes its job before the claim");
        UUID attempt = aStartingAttempt(job, "fake-a");

        assertThatThrownBy(() -> steps.run(attempt, null, step -> {
                    step.job().requireReview("changed before the claim", step.now());
                    step.jobStartedByTheClaim();
                    return null;
                }))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("writes only the start");
        assertThat(stateAndVersion(job)).isEqualTo("accepted 0");
    }

    @Test
    void aClaimWhoseJobChangedSinceTheLoadRunsTheStepAgainAndStartsTheJobOnce() {
        UUID job = aJob("a claim whose job changed since its load");
        UUID attempt = aStartingAttempt(job, "fake-a");
        AtomicInteger runs = new AtomicInteger();

        ClaimStep.Decision decision = steps.run(attempt, null, step -> {
            if (runs.incrementAndGet() == 1) {
                // Committed between this run's load and its claim: a reviewer's change, say.
                execute("UPDATE job SET version = version + 1 WHERE id = '" + job + "'");
            }
            return claim.decide(step, false);
        });

        assertThat(runs)
                .as("the claim's start of the job failed its version check")
                .hasValue(2);
        assertThat(decision.next()).isEqualTo(ClaimStep.Next.CALL);
        assertThat(stateAndVersion(job)).isEqualTo("running 2");
        assertThat(count("SELECT count(*) FROM job_event WHERE attempt_id = '" + attempt
                        + "' AND kind = 'attempt.claimed'"))
                .as("the first run's claim rolled back with it")
                .isEqualTo(1);
    }

    /** The job's state and version as committed, as "running 1". */
    private String stateAndVersion(UUID job) {
        return text("SELECT state || ' ' || version FROM job WHERE id = '" + job + "'");
    }

    /**
     * Runs a step that makes {@code change} (told which run it is); in its first run, between the
     * step's load and its write, another step commits {@code concurrently}. Returns how many runs it took.
     */
    private int runsOfAStepWrittenConcurrentlyInItsFirstRun(
            UUID attempt, Consumer<AttemptSteps.Loaded> concurrently, ObjIntConsumer<AttemptSteps.Loaded> change) {
        AtomicInteger runs = new AtomicInteger();
        steps.run(attempt, false, step -> {
            if (runs.incrementAndGet() == 1) {
                assertThat(steps.run(attempt, false, other -> {
                            concurrently.accept(other);
                            return true;
                        }))
                        .isTrue();
            }
            change.accept(step, runs.get());
            return true;
        });
        return runs.get();
    }

    @Test
    void aStepWritesBackEveryColumnOfTheJobItChanged() {
        UUID job = aJob("a step that changes every column of its job but the winner");
        UUID attempt = aStartingAttempt(job, "fake-a");

        Job.Changeable written = steps.run(attempt, null, step -> {
            step.job().requireReview("a person looks first", step.now());
            step.job().expire(step.now());
            return step.job().changeable();
        });

        assertWrittenBack(
                steps.run(attempt, null, step -> step.job().changeable()), written, Job.Changeable::updatedAt);
    }

    /** What a later step reads back is what the step wrote, its update time to the microsecond. */
    private static <T extends Record> void assertWrittenBack(T readBack, T written, Function<T, Instant> updatedAt) {
        assertThat(readBack)
                .usingRecursiveComparison()
                .ignoringFields("updatedAt")
                .isEqualTo(written);
        // The column keeps microseconds, rounded.
        assertThat(updatedAt.apply(readBack)).isCloseTo(updatedAt.apply(written), within(1, ChronoUnit.MICROS));
    }

    @Test
    void eachWriteBackCoversEveryColumnItsEntityMayUpdate() {
        assertThat(componentsOf(Attempt.Changeable.class)).isEqualTo(updatableBesidesTheVersion(Attempt.class));
        assertThat(componentsOf(Job.Changeable.class)).isEqualTo(updatableBesidesTheVersion(Job.class));
    }

    private Set<String> updatableBesidesTheVersion(Class<?> entity) {
        EntityPersister mapping = sessions.unwrap(SessionFactoryImplementor.class)
                .getMappingMetamodel()
                .getEntityDescriptor(entity);
        String[] properties = mapping.getPropertyNames();
        boolean[] updatable = mapping.getPropertyUpdateability();
        return IntStream.range(0, properties.length)
                .filter(property -> updatable[property])
                .mapToObj(property -> properties[property])
                .filter(property -> !property.equals("version"))
                .collect(Collectors.toSet());
    }

    private static Set<String> componentsOf(Class<? extends Record> changeable) {
        return Arrays.stream(changeable.getRecordComponents())
                .map(RecordComponent::getName)
                .collect(Collectors.toSet());
    }

    private String versions(UUID job, UUID attempt) {
        return text("SELECT j.version || '/' || j.xmin || ' ' || a.version || '/' || a.xmin"
                + " FROM job j JOIN attempt a ON a.job_id = j.id WHERE a.id = '" + attempt + "'");
    }
}
