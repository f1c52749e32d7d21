package dev.jobapi.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.URI;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;

/**
 * The provider-pause fault (issue 30; docs/design.md, rule 19): an operator pauses the soak's second provider
 * through the API for up to ten minutes under load, then resumes it. While it is paused none of its attempts
 * may be claimed or called and none dead-lettered; they are held, and the resume announces them again (the
 * run's end checks that every job completed). A pause that let a call through fails the run.
 */
final class ProviderPause {

    static final String PROVIDER = "fake-b";
    /** The longest pause: issue 30 asks for ten minutes under load. */
    static final Duration LONGEST = Duration.ofMinutes(10);
    /**
     * A claim that read "not paused" just before the pause committed may still send: its call reaches the
     * provider within this much of the pause.
     */
    private static final Duration IN_FLIGHT = Duration.ofSeconds(10);
    /**
     * How long the pause and the resume are tried, across api processes, their rollouts and a clustered
     * database failover (the api answers 503 server-busy until the standby is promoted).
     */
    private static final Duration PATIENCE = Drain.Database.THROUGH_FAILOVER;

    private final Api api;
    private final String operatorToken;
    private final URI fake;
    private final Drain.Database database;

    ProviderPause(Api api, String operatorToken, URI fake, Drain.Database database) {
        this.api = api;
        this.operatorToken = operatorToken;
        this.fake = fake;
        this.database = database;
    }

    /** The pause's length for a run of this window: a third of it, at most {@link #LONGEST}. */
    static Duration lengthFor(Duration window) {
        Duration third = window.dividedBy(3);
        return third.compareTo(LONGEST) > 0 ? LONGEST : third;
    }

    /** Pauses, waits {@code length}, resumes, and says what was held; throws when a paused call went out. */
    String inject(Duration length) throws InterruptedException {
        try {
            call("pause", "chaos soak: provider pause fault", PATIENCE);
        } catch (IllegalStateException unanswered) {
            // A pause whose answer was lost may have taken effect: ended, it holds nothing past the fault.
            call("resume", "chaos soak: the pause was not answered", LONGEST);
            throw unanswered;
        }
        Instant pausedAt = Instant.now();
        Thread.sleep(length.toMillis());
        Instant resumingAt = Instant.now();
        JsonNode resumed = resume();
        long sends = ProviderOutage.calls(new FakeLog(fake).fetch(), PROVIDER, pausedAt.plus(IN_FLIGHT), resumingAt)
                .sends();
        Observed observed = observe(pausedAt, resumingAt);
        String detail = String.format(
                "%s paused %d s: %d attempts held, %d moved by automatic fallback, %d announced again at the"
                        + " resume; %d claimed and %d calls received %d s into the pause or later, %d dead-lettered",
                PROVIDER,
                Duration.between(pausedAt, resumingAt).toSeconds(),
                observed.held(),
                observed.movedByFallback(),
                resumed.path("reannounced").asLong(),
                observed.claimed(),
                sends,
                IN_FLIGHT.toSeconds(),
                observed.deadLettered());
        if (observed.claimed() > 0 || sends > 0 || observed.deadLettered() > 0) {
            throw new IllegalStateException("the paused provider's work went on: " + detail);
        }
        return detail;
    }

    /**
     * Resumes the provider. A resume not answered within {@link #PATIENCE} fails the fault, but only
     * once it is answered: a provider left paused would hold its attempts through the drain, and the
     * run would report them lost instead of naming the resume that never came.
     */
    private JsonNode resume() throws InterruptedException {
        Instant askedAt = Instant.now();
        try {
            return call("resume", "chaos soak: the pause is over", PATIENCE);
        } catch (IllegalStateException unanswered) {
            call("resume", "chaos soak: the pause is over, late", LONGEST);
            throw new IllegalStateException(unanswered.getMessage() + "; answered "
                    + Duration.between(askedAt, Instant.now()).toSeconds() + " s after it was first asked");
        }
    }

    /** POSTs the pause or the resume, again on another process or later until one answers 200. */
    private JsonNode call(String action, String reason, Duration patience) throws InterruptedException {
        Instant giveUp = Instant.now().plus(patience);
        String last = "no answer";
        for (int round = 0; Instant.now().isBefore(giveUp); round++) {
            try {
                Api.Answer answer = api.send(
                        round % api.processes(),
                        "POST",
                        "/admin/providers/" + PROVIDER + "/" + action,
                        operatorToken,
                        null,
                        "{\"reason\": \"" + reason + "\"}");
                if (answer.status() == 200) {
                    return answer.body();
                }
                last = answer.status() + " " + answer.body();
            } catch (IOException e) {
                last = e.toString();
            }
            Thread.sleep(1_000);
        }
        throw new IllegalStateException("the " + action + " of " + PROVIDER + " was not answered 200: " + last);
    }

    /** What the database says of the provider's attempts during the pause. */
    private record Observed(long held, long movedByFallback, long claimed, long deadLettered) {}

    private Observed observe(Instant pausedAt, Instant resumingAt) throws InterruptedException {
        String sql = "WITH w AS (SELECT ?::text AS provider, ?::timestamptz AS paused_at,"
                + " ?::timestamptz AS resuming_at, ?::timestamptz AS in_flight_over)"
                + " SELECT"
                + " (SELECT count(DISTINCT e.attempt_id) FROM job_event e JOIN attempt a ON a.id = e.attempt_id"
                + "   WHERE a.provider = w.provider AND e.kind = 'attempt.held'"
                + "   AND e.at >= w.paused_at AND e.at < w.resuming_at),"
                + " (SELECT count(*) FROM job_event e JOIN attempt a ON a.id = e.attempt_id"
                + "   WHERE a.provider = w.provider AND e.kind = 'attempt.superseded' AND e.detail LIKE '%is paused%'"
                + "   AND e.at >= w.paused_at AND e.at < w.resuming_at),"
                + " (SELECT count(*) FROM job_event e JOIN attempt a ON a.id = e.attempt_id"
                + "   WHERE a.provider = w.provider AND e.kind = 'attempt.claimed'"
                + "   AND e.at >= w.in_flight_over AND e.at < w.resuming_at),"
                + " (SELECT count(*) FROM dead_letter d WHERE d.provider = w.provider"
                + "   AND d.dead_lettered_at >= w.paused_at AND d.dead_lettered_at < w.resuming_at)"
                + " FROM w";
        return database.read(db -> {
            try (PreparedStatement query = db.prepareStatement(sql)) {
                query.setString(1, PROVIDER);
                query.setTimestamp(2, Timestamp.from(pausedAt));
                query.setTimestamp(3, Timestamp.from(resumingAt));
                query.setTimestamp(4, Timestamp.from(pausedAt.plus(IN_FLIGHT)));
                try (ResultSet row = query.executeQuery()) {
                    row.next();
                    return new Observed(row.getLong(1), row.getLong(2), row.getLong(3), row.getLong(4));
                }
            }
        });
    }
}
