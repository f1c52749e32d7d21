package dev.jobapi.api.service;

import dev.jobapi.api.config.JobApiConfig;
import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The share of the connection pool GET /jobs may hold: at most {@code jobapi.queries.max-concurrent-lists}
 * pages are read at once, each in its own transaction taken inside its turn, so the rest of the pool
 * stays for intake, attempt requests, callbacks, the outbox relay and readiness. A page that finds no
 * turn within {@code jobapi.queries.list-wait} is answered 503 {@code server-busy} with Retry-After,
 * before it asks the pool for anything.
 */
@ApplicationScoped
public class ListTurns {

    private final Semaphore turns;
    private final int size;
    private final Duration wait;

    ListTurns(JobApiConfig config) {
        this.size = config.queries().maxConcurrentLists();
        this.turns = new Semaphore(size, true);
        this.wait = config.queries().listWait();
    }

    /** Runs {@code read} (a transaction of its own) in a turn, or refuses it when none comes in time. */
    public <T> T inTurn(Supplier<T> read) {
        boolean taken;
        try {
            taken = turns.tryAcquire(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            taken = false;
        }
        if (!taken) {
            throw new ProblemException(
                    Problem.SERVER_BUSY,
                    size + " pages of jobs are being read already; retry after " + Problem.RETRY_AFTER_SECONDS + " s.");
        }
        try {
            return read.get();
        } finally {
            turns.release();
        }
    }
}
