package dev.jobapi.api.mapping;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.attempt.UsageRecord;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.start.AttemptStarts;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/** Builds Job representations, including the actions the caller may take now. */
@ApplicationScoped
public class JobViews {

    public static final String REQUEST_ATTEMPT = "request_attempt";
    public static final String CANCEL = "cancel";
    public static final String SUPERSEDE = "supersede";
    public static final String FETCH_OUTPUT = "fetch_output";

    private final AttemptRepository attempts;
    private final AttemptStarts starts;
    private final ObjectMapper mapper;

    JobViews(AttemptRepository attempts, AttemptStarts starts, ObjectMapper mapper) {
        this.attempts = attempts;
        this.starts = starts;
        this.mapper = mapper;
    }

    @Transactional(Transactional.TxType.SUPPORTS)
    public JobView of(Job job, Caller caller) {
        return of(job, attempts.forJob(job.id()), attempts.usageOfJob(job.id()), caller);
    }

    /** A job intake has just written, with its first attempt: nothing to read back, nothing spent yet. */
    public JobView ofNewJob(Job job, Attempt first, Caller caller) {
        return of(job, List.of(first), Map.of(), caller);
    }

    private JobView of(Job job, List<Attempt> jobAttempts, Map<UUID, UsageRecord> usage, Caller caller) {
        List<AttemptView> attemptViews = jobAttempts.stream()
                .map(a -> AttemptView.of(a, usage.get(a.id())))
                .toList();
        try {
            return new JobView(
                    job.id(),
                    job.state(),
                    job.idempotencyKey(),
                    job.inputDigest(),
                    mapper.readTree(job.input()),
                    job.provider(),
                    job.fallbackProviders(),
                    job.winningAttemptId(),
                    job.version(),
                    job.reviewReason(),
                    job.createdAt(),
                    job.updatedAt(),
                    attemptViews,
                    actions(job, jobAttempts, caller, () -> starts.refusal(job, jobAttempts)
                            .isEmpty()));
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException("Stored input of job " + job.id() + " is not JSON", e);
        }
    }

    /**
     * The buttons a client may draw, derived from server state and the caller's role only: a button
     * is offered only when pressing it would be accepted now. {@code attemptMayStart} is asked only
     * when the job itself would take another attempt (not closed, nothing open), so a job with an
     * open attempt, the common case, costs no further read.
     */
    static List<String> actions(Job job, List<Attempt> jobAttempts, Caller caller, BooleanSupplier attemptMayStart) {
        List<String> actions = new ArrayList<>();
        boolean won = job.winningAttemptId() != null;
        if (!job.state().isTerminal() && !won) {
            boolean anyOpen = jobAttempts.stream().anyMatch(a -> a.state().isOpen());
            if (!anyOpen) {
                if (attemptMayStart.getAsBoolean()) {
                    actions.add(REQUEST_ATTEMPT);
                }
            } else if (caller.isReviewer()) {
                actions.add(SUPERSEDE);
            }
            actions.add(CANCEL);
        }
        if (won) {
            actions.add(FETCH_OUTPUT);
        }
        return actions;
    }
}
