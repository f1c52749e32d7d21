package dev.jobapi.api.service;

import dev.jobapi.api.mapping.JobSummary;
import dev.jobapi.api.mapping.JobView;
import dev.jobapi.api.mapping.JobViews;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.job.JobEventKind;
import dev.jobapi.common.job.JobEvents;
import dev.jobapi.common.job.JobRepository;
import dev.jobapi.common.start.AttemptStarts;
import dev.jobapi.common.start.StartRefusal;
import dev.jobapi.common.tracing.Tracing;
import io.opentelemetry.api.trace.Span;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.persistence.EntityManager;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import org.hibernate.query.TypedParameterValue;
import org.hibernate.type.StandardBasicTypes;

/**
 * Job intake (docs/design.md, rule 1): one job per (owner, Idempotency-Key), however many times and
 * however concurrently the same request arrives.
 */
@ApplicationScoped
public class JobIntake {

    private final EntityManager em;
    private final JobRepository jobs;
    private final ProviderRegistry providers;
    private final JobEvents events;
    private final AttemptStarts starts;
    private final JobViews views;
    private final Clock clock;

    JobIntake(
            EntityManager em,
            JobRepository jobs,
            ProviderRegistry providers,
            JobEvents events,
            AttemptStarts starts,
            JobViews views,
            Clock clock) {
        this.em = em;
        this.jobs = jobs;
        this.providers = providers;
        this.events = events;
        this.starts = starts;
        this.views = views;
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
     * @param canonicalInput the canonical JSON of the client's {@code input} object
     * @param preview the start of the input's text fields, stored with the job for GET /jobs
     * @param fallback providers automatic fallback may move to, in order; each one must be known
     * @param deadline when no provider call may start for the job any more, as requested
     * @param bodyDigest the digest of the whole canonical request body
     */
    @Transactional
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
        // A concurrent insert of the same key waits here for the first one to commit, then gets no row.
        List<?> inserted = em.createNativeQuery(
                        "INSERT INTO job (id, owner_id, idempotency_key, input_digest, input, provider,"
                                + " fallback_providers, state, version, created_at, updated_at,"
                                + " input_prompt_preview, input_repository_preview, input_base_ref_preview, deadline)"
                                + " VALUES (?1, ?2, ?3, ?4, ?5, ?6, string_to_array(?8, ','), 'accepted', 0, ?7, ?7,"
                                + " ?9, ?10, ?11, ?12)"
                                + " ON CONFLICT (owner_id, idempotency_key) DO NOTHING RETURNING id")
                .setParameter(1, job.id())
                .setParameter(2, job.ownerId())
                .setParameter(3, job.idempotencyKey())
                .setParameter(4, job.inputDigest())
                .setParameter(5, job.input())
                .setParameter(6, job.provider())
                .setParameter(7, now)
                .setParameter(8, fallbackList)
                .setParameter(9, text(preview.prompt()))
                .setParameter(10, text(preview.repository()))
                .setParameter(11, text(preview.baseRef()))
                .setParameter(12, new TypedParameterValue<>(StandardBasicTypes.INSTANT, deadlineAt))
                .getResultList();
        if (inserted.isEmpty()) {
            // Zero rows: this owner used this key before. Same canonical body: the same job. Else refuse.
            return replayOf(caller, idempotencyKey, bodyDigest)
                    .orElseThrow(() -> new IllegalStateException("Conflicting job vanished: " + idempotencyKey));
        }
        // Only a new job starts an attempt; a replay above never counts against the budget.
        Optional<StartRefusal> refusal = starts.refusalAt(caller.subject(), provider);
        if (refusal.isPresent()) {
            throw StartRefusals.problem(refusal.get());
        }
        Attempt first = starts.start(job.id(), provider, null, null, now);
        // The request's server span names what it made, as every span of this job's trace does.
        Tracing.name(Span.current(), job.id(), first.id());
        events.record(
                job.id(),
                List.of(
                        new JobEvents.Event(
                                null,
                                JobEventKind.JOB_CREATED,
                                "Idempotency-Key " + idempotencyKey + ", owner " + caller.subject()),
                        new JobEvents.Event(first.id(), JobEventKind.ATTEMPT_REQUESTED, "provider " + provider)));
        return new Replayable<>(views.ofNewJob(job, first, caller), true);
    }

    /** A text parameter that may be null: typed, so a null is bound as text, not as an unknown type. */
    private static TypedParameterValue<String> text(String value) {
        return new TypedParameterValue<>(StandardBasicTypes.STRING, value);
    }
}
