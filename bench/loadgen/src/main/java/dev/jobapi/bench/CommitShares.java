package dev.jobapi.bench;

import java.util.Locale;
import java.util.Optional;

/**
 * The commits of one end-to-end step per completed job, split by whose they are. The database counts
 * every process's transactions together ({@code xact_commit} of {@code pg_stat_database}); bench/run
 * records beside that count the relay's committed transactions (the api's {@code
 * jobapi_outbox_batches_total}), its own polling queries, and what every process committed in a
 * quiet window just before the step, when no job moved: the background loops' rate (sweeps, gates,
 * metrics), which runs on whatever the load. The jobs' own commits are what is left.
 *
 * @param completed jobs completed in the step
 * @param commits transactions the database committed over the step's window
 * @param relayCommits of those, the outbox relay's
 * @param benchQueries of those, bench/run's own queries (each one a transaction)
 * @param windowMs the window the commits were counted over
 * @param quietCommits transactions committed in the quiet window, bench/run's own reads apart
 * @param quietRelayCommits of those, the relay's (its rounds that found nothing waiting)
 * @param quietMs the quiet window's length
 */
record CommitShares(
        double completed,
        double commits,
        double relayCommits,
        double benchQueries,
        double windowMs,
        double quietCommits,
        double quietRelayCommits,
        double quietMs) {

    /** The step's shares, or empty when it recorded no count (an older run, or a step that failed). */
    static Optional<CommitShares> of(Observation e2e) {
        String[] keys = {
            "completed",
            "commits",
            "relay_commits",
            "bench_queries",
            "window_ms",
            "quiet_commits",
            "quiet_relay_commits",
            "quiet_ms"
        };
        double[] values = new double[keys.length];
        for (int i = 0; i < keys.length; i++) {
            Optional<Double> value = e2e.number(keys[i]);
            if (value.isEmpty()) {
                return Optional.empty();
            }
            values[i] = value.get();
        }
        if (values[0] <= 0 || values[4] <= 0 || values[7] <= 0) {
            return Optional.empty();
        }
        return Optional.of(new CommitShares(
                values[0], values[1], values[2], values[3], values[4], values[5], values[6], values[7]));
    }

    /** Every process's commits a job, as the database counted them. */
    double total() {
        return commits / completed;
    }

    /** The relay's transactions a job: one a batch of messages, and its idle rounds. */
    double relay() {
        return relayCommits / completed;
    }

    /** The background loops' commits a job: their quiet rate over the step's window. */
    double loops() {
        double perMs = Math.max(0, quietCommits - quietRelayCommits) / quietMs;
        return perMs * windowMs / completed;
    }

    /** bench/run's own polling a job. */
    double bench() {
        return benchQueries / completed;
    }

    /** What is left for the jobs themselves: intake, claim and record, and every retry or rerun. */
    double jobs() {
        return total() - relay() - loops() - bench();
    }

    /** "3.20 every process's: the jobs' 3.01, the relay's 0.11, the loops' 0.07, the bench's 0.01". */
    String describe() {
        return String.format(
                Locale.ROOT,
                "%.2f every process's: the jobs' %.2f, the relay's %.2f, the background loops' %.2f,"
                        + " bench/run's polling %.2f",
                total(),
                jobs(),
                relay(),
                loops(),
                bench());
    }
}
