package dev.jobapi.api.mapping;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.attempt.AttemptRepository;
import dev.jobapi.common.job.Job;
import dev.jobapi.common.start.AttemptStarts;
import jakarta.inject.Singleton;
import jakarta.transaction.Transactional;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.function.BooleanSupplier;

/** Builds Job representations, including the actions the caller may take now. */
@Singleton
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

    /**
     * The most attempts one job representation lists, the newest ones: a job asked again and again
     * must not grow an answer (and its reads) without bound. {@code attemptsTotal} says how many the
     * job has.
     */
    public static final int ATTEMPTS_SHOWN = 100;

    /**
     * The job with its newest {@link #ATTEMPTS_SHOWN} attempts, oldest of them first. The actions
     * still see every open attempt: when older ones are left out, the open ones are read on their own.
     */
    @Transactional(Transactional.TxType.SUPPORTS)
    public JobView of(Job job, Caller caller) {
        List<AttemptRepository.WithUsage> newest = attempts.newestOfJob(job.id(), ATTEMPTS_SHOWN + 1);
        if (newest.size() <= ATTEMPTS_SHOWN) {
            List<AttemptRepository.WithUsage> shown = oldestFirst(newest);
            List<Attempt> all =
                    shown.stream().map(AttemptRepository.WithUsage::attempt).toList();
            return of(job, shown, all.size(), all, caller);
        }
        List<AttemptRepository.WithUsage> shown = oldestFirst(newest.subList(0, ATTEMPTS_SHOWN));
        List<Attempt> forActions = new ArrayList<>(
                shown.stream().map(AttemptRepository.WithUsage::attempt).toList());
        attempts.openOfJob(job.id()).stream()
                .filter(open -> forActions.stream().noneMatch(a -> a.id().equals(open.id())))
                .forEach(forActions::add);
        return of(job, shown, attempts.count("jobId", job.id()), forActions, caller);
    }

    private static List<AttemptRepository.WithUsage> oldestFirst(List<AttemptRepository.WithUsage> newestFirst) {
        List<AttemptRepository.WithUsage> reversed = new ArrayList<>(newestFirst);
        Collections.reverse(reversed);
        return reversed;
    }

    /** A job intake has just written, with its first attempt: nothing to read back, nothing spent yet. */
    public JobView ofNewJob(Job job, Attempt first, Caller caller) {
        return of(job, List.of(new AttemptRepository.WithUsage(first, null)), 1, List.of(first), caller);
    }

    /**
     * @param shown the attempts listed, with their usage
     * @param jobAttempts the attempts the actions are decided on: the shown ones and every open one
     */
    private JobView of(
            Job job,
            List<AttemptRepository.WithUsage> shown,
            long attemptsTotal,
            List<Attempt> jobAttempts,
            Caller caller) {
        List<AttemptView> attemptViews =
                shown.stream().map(a -> AttemptView.of(a.attempt(), a.usage())).toList();
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
                    job.deadline(),
                    job.cancelReason(),
                    job.createdAt(),
                    job.updatedAt(),
                    attemptViews,
                    attemptsTotal,
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
