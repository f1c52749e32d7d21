package dev.jobapi.api.service;

import dev.jobapi.api.mapping.JobSummary;
import dev.jobapi.api.mapping.JobView;
import dev.jobapi.api.mapping.JobViews;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.budget.SpendBudgets;
import dev.jobapi.common.database.PlainTransactions;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.job.JobRepository;
import dev.jobapi.common.message.JobChangeNotices;
import dev.jobapi.common.message.OutboxWriter;
import dev.jobapi.common.start.AttemptStarts;
import dev.jobapi.common.start.StartRefusal;
import dev.jobapi.common.text.StoredText;
import dev.jobapi.common.tracing.Tracing;
import io.opentelemetry.api.trace.Span;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;

/**
 * Job intake (docs/design.md, rule 1): one job per (owner, Idempotency-Key), however many times and
 * however concurrently the same request arrives.
 */
@Singleton
public class JobIntake {

    private final PlainTransactions transactions;
    private final JobRepository jobs;
    private final ProviderRegistry providers;
    private final JobEvents events;
    private final AttemptStarts starts;
    private final OutboxWriter outbox;
    private final JobViews views;
    private final JobChangeNotices notices;
    private final Clock clock;

    JobIntake(
            PlainTransactions transactions,
            JobRepository jobs,
            ProviderRegistry providers,
            JobEvents events,
            AttemptStarts starts,
            OutboxWriter outbox,
            JobViews views,
            JobChangeNotices notices,
            Clock clock) {
        this.transactions = transactions;
        this.jobs = jobs;
        this.providers = providers;
        this.events = events;
        this.starts = starts;
        this.outbox = outbox;
        this.views = views;
        this.notices = notices;
        this.clock = clock;
    }

    /**
     * The job this owner's key already made, when the key was used before: the same job for the same
     * canonical body (recorded as a replay), 422 {@code idempotency-key-reused} for another body.
     * Empty when the key is new. A request refused before intake (an input bound, a provider name
     * that a later configuration no longer knows) asks here first, so a retry of a job that exists
     * is answered with that job, never with a refusal its client would take for "no job was made".
     */
    @Transactional
    public Optional<Replayable<JobView>> replayOf(Caller caller, String idempotencyKey, String bodyDigest) {
        Optional<Job> found = jobs.findByOwnerAndKey(caller.subject(), idempotencyKey);
        if (found.isEmpty()) {
            return Optional.empty();
        }
        Job existing = found.get();
        if (!existing.inputDigest().equals(bodyDigest)) {
            throw new ProblemException(
                    Problem.IDEMPOTENCY_KEY_REUSED,
                    "Job " + existing.id() + " was created with this key and a different body.");
        }
        events.recordAtMostOncePer(
                JobEvents.REPLAY_WINDOW,
                existing.id(),
                null,
                JobEventKind.JOB_REPLAYED,
                "Idempotency-Key " + idempotencyKey);
        return Optional.of(new Replayable<>(views.of(existing, caller), false));
    }

    /**
     * Creates the job with its first attempt and that attempt's outbox row, or finds the job this
     * key already made; returns the job's representation either way.
     *
     * <p>The new job is one statement and its commit, on a plain transaction ({@link
     * PlainTransactions}): no transaction manager, no ORM session, which were a third of the api's CPU
     * on intake. The replay of a key used before is the rare path, and keeps {@link #replayOf}'s own.
     *
     * @param canonicalInput the canonical JSON of the client's {@code input} object
     * @param preview the start of the input's text fields, stored with the job for GET /jobs
     * @param fallback providers automatic fallback may move to, in order; each one must be known
     * @param deadline when no provider call may start for the job any more, as requested
     * @param bodyDigest the digest of the whole canonical request body
     */
    public Replayable<JobView> submit(
            Caller caller,
            String idempotencyKey,
            String canonicalInput,
            JobSummary.InputPreview preview,
            String requestedProvider,
            List<String> fallback,
            RequestedDeadline deadline,
            String bodyDigest) {
        String provider = providers.resolve(requestedProvider);
        String fallbackList = providers.fallbackList(provider, fallback);
        // At the database's precision: the 201 body is built from these values, not read back.
        Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
        Instant deadlineAt = deadline.resolve(now);
        Job job = Job.accepted(
                UUID.randomUUID(),
                caller.subject(),
                idempotencyKey,
                bodyDigest,
                canonicalInput,
                provider,
                fallback,
                deadlineAt,
                now);
        Attempt first = Attempt.starting(job.id(), provider, null, null, now);
        OutboxWriter.Origin origin = outbox.origin();
        boolean created = transactions.inTransaction("Job intake", connection -> {
            Optional<List<SpendBudgets.SetBudget>> setBudgets =
                    insertJobWithFirstAttempt(connection, job, first, preview, fallbackList, origin);
            if (setBudgets.isEmpty()) {
                return false;
            }
            // Only a new job's attempt counts against the budget; a refusal rolls the whole insert back.
            Optional<StartRefusal> refusal =
                    starts.refusalOfFirstAttempt(connection, caller.subject(), provider, setBudgets.get());
            if (refusal.isPresent()) {
                throw StartRefusals.problem(refusal.get());
            }
            return true;
        });
        if (!created) {
            // Nothing written: this owner used this key before. Same canonical body: the same job. Else refuse.
            return replayOf(caller, idempotencyKey, bodyDigest)
                    .orElseThrow(() -> new IllegalStateException("Conflicting job vanished: " + idempotencyKey));
        }
        // Committed: wake the relay for the outbox row, and the job's streams for its timeline.
        outbox.announced();
        notices.changed(Set.of(job.id()));
        // The request's server span names what it made, as every span of this job's trace does.
        Tracing.name(Span.current(), job.id(), first.id());
        return new Replayable<>(views.ofNewJob(job, first, caller), true);
    }

    /**
     * The job, its first attempt, the attempt's outbox row (rule 3) and the two timeline rows, in one
     * statement and one round trip, which also reads the money budgets an operator set for the owner,
     * for the budget's early refusal. The job's insert is {@code ON CONFLICT (owner_id,
     * idempotency_key) DO NOTHING}: a concurrent insert of the same key waits for the first one to
     * commit, then inserts no job, and so no attempt, no outbox row and no events either.
     *
     * @return the owner's set budgets; empty when this owner's key made a job before, and nothing was
     *     written
     */
    private static Optional<List<SpendBudgets.SetBudget>> insertJobWithFirstAttempt(
            Connection connection,
            Job job,
            Attempt first,
            JobSummary.InputPreview preview,
            String fallbackList,
            OutboxWriter.Origin origin)
            throws SQLException {
        try (PreparedStatement insert = connection.prepareStatement(INSERT_JOB_WITH_FIRST_ATTEMPT)) {
            OffsetDateTime now = OffsetDateTime.ofInstant(job.createdAt(), ZoneOffset.UTC);
            int i = 0;
            insert.setObject(++i, job.id());
            insert.setString(++i, job.ownerId());
            insert.setString(++i, job.idempotencyKey());
            insert.setString(++i, job.inputDigest());
            insert.setString(++i, job.input());
            insert.setString(++i, job.provider());
            insert.setString(++i, fallbackList);
            insert.setObject(++i, now);
            insert.setString(++i, preview.prompt());
            insert.setString(++i, preview.repository());
            insert.setString(++i, preview.baseRef());
            insert.setObject(
                    ++i,
                    job.deadline() == null ? null : OffsetDateTime.ofInstant(job.deadline(), ZoneOffset.UTC),
                    Types.TIMESTAMP_WITH_TIMEZONE);
            insert.setObject(++i, first.id());
            insert.setString(++i, first.state().wireName());
            insert.setString(++i, first.requestKey());
            insert.setString(++i, origin.trace().traceparent());
            insert.setString(++i, origin.trace().tracestate());
            insert.setString(++i, origin.requestId());
            insert.setString(++i, JobEventKind.JOB_CREATED.wireName());
            insert.setString(
                    ++i, StoredText.of("Idempotency-Key " + job.idempotencyKey() + ", owner " + job.ownerId()));
            insert.setString(++i, JobEventKind.ATTEMPT_REQUESTED.wireName());
            insert.setString(++i, StoredText.of("provider " + job.provider()));
            insert.setString(++i, job.ownerId());
            try (ResultSet inserted = insert.executeQuery()) {
                inserted.next();
                return inserted.getBoolean(1)
                        ? Optional.of(SpendBudgets.readSetBudgets(inserted, 2))
                        : Optional.empty();
            }
        }
    }

    /**
     * One data-modifying statement: each part inserts from the rows the part before it returned, so
     * a conflicting key stops them all. The owner's set budgets come back with whether the job was new. The attempt, its outbox row and the timeline take the job's
     * time and its owner (which spares them the owner triggers, V32); the timeline rows go in the
     * order a person reads them.
     */
    private static final String INSERT_JOB_WITH_FIRST_ATTEMPT = "WITH new_job AS ("
            + "INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider, fallback_providers,"
            + " state, version, created_at, updated_at, input_prompt_preview, input_repository_preview,"
            + " input_base_ref_preview, deadline)"
            + " SELECT given.id, given.owner_id, given.idempotency_key, given.input_digest, given.input,"
            + " given.provider, string_to_array(given.fallback, ','), 'accepted', 0, given.at, given.at,"
            + " given.prompt_preview, given.repository_preview, given.base_ref_preview, given.deadline"
            + " FROM (SELECT ?::uuid AS id, ?::text AS owner_id, ?::text AS idempotency_key, ?::text AS input_digest,"
            + " ?::text AS input, ?::text AS provider, ?::text AS fallback, ?::timestamptz AS at,"
            + " ?::text AS prompt_preview, ?::text AS repository_preview, ?::text AS base_ref_preview,"
            + " ?::timestamptz AS deadline) given"
            + " ON CONFLICT (owner_id, idempotency_key) DO NOTHING RETURNING id, owner_id, provider, created_at),"
            + " new_attempt AS (INSERT INTO attempt (id, job_id, provider, state, request_key, version, created_at,"
            + " updated_at) SELECT ?::uuid, id, provider, ?::text, ?::text, 0, created_at, created_at FROM new_job"
            + " RETURNING id, job_id, created_at),"
            + " new_outbox AS (INSERT INTO outbox (attempt_id, job_id, owner_id, created_at, traceparent, tracestate,"
            + " request_id) SELECT new_attempt.id, job_id, owner_id, new_attempt.created_at, ?::text, ?::text, ?::text"
            + " FROM new_attempt JOIN new_job ON new_job.id = new_attempt.job_id),"
            + " new_events AS (INSERT INTO job_event (job_id, owner_id, attempt_id, at, kind, detail)"
            + " SELECT job_id, owner_id, attempt_id, at, kind, detail FROM ("
            + "SELECT 1 AS place, id AS job_id, owner_id, NULL::uuid AS attempt_id, created_at AS at, ?::text AS kind,"
            + " ?::text AS detail FROM new_job"
            + " UNION ALL SELECT 2, job_id, owner_id, new_attempt.id, new_attempt.created_at, ?::text, ?::text"
            + " FROM new_attempt JOIN new_job ON new_job.id = new_attempt.job_id) timeline"
            + " ORDER BY place)"
            + " SELECT EXISTS (SELECT 1 FROM new_job), set_budget.* FROM (" + SpendBudgets.SET_BUDGETS + ") set_budget";
}
