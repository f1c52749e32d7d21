package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * A job's deadline as its request gave it: an instant, a time to live counted from intake, or
 * neither. Past the deadline no provider call starts for the job (docs/design.md, rule 18).
 */
public record RequestedDeadline(Instant at, Duration timeToLive) {

    /** No deadline: the job may start whenever a worker gets to it. */
    public static final RequestedDeadline NONE = new RequestedDeadline(null, null);

    /** The furthest deadline a job may carry, from its intake. */
    public static final Duration LONGEST = Duration.ofDays(30);

    /**
     * The deadline of a job accepted at {@code now}, at the database's precision; null for none.
     *
     * @throws ProblemException 400 for a deadline that is not after {@code now} or further than {@link
     *     #LONGEST}
     */
    Instant resolve(Instant now) {
        Instant deadline = at != null ? at : timeToLive != null ? now.plus(timeToLive) : null;
        if (deadline == null) {
            return null;
        }
        if (!deadline.isAfter(now)) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST, "'deadline' " + deadline + " is not in the future (now " + now + ").");
        }
        if (deadline.isAfter(now.plus(LONGEST))) {
            throw new ProblemException(
                    Problem.INVALID_REQUEST,
                    "'deadline' " + deadline + " is more than " + LONGEST.toDays() + " days away.");
        }
        return deadline.truncatedTo(ChronoUnit.MICROS);
    }
}
