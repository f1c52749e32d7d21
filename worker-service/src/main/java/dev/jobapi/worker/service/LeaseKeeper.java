package dev.jobapi.worker.service;

import dev.jobapi.worker.config.WorkerConfig;
import dev.jobapi.worker.provider.SendGuard;
import dev.jobapi.worker.repository.AttemptWork;
import io.quarkus.narayana.jta.QuarkusTransaction;
import jakarta.inject.Singleton;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import org.jboss.logging.Logger;

/**
 * Keeps a claimed attempt's lease while its provider call is in flight, as River and pg-boss do for
 * long jobs: the lease is renewed every third of its length, so a live call of any length keeps it,
 * and a worker that died loses it within one lease (the sweep then declares the attempt unknown).
 * The send guard it hands the provider refuses a resend once the lease is no longer this worker's.
 */
@Singleton
public class LeaseKeeper {

    private static final Logger LOG = Logger.getLogger(LeaseKeeper.class);

    private final AttemptWork work;
    private final Duration lease;
    private final String workerId;
    private final ScheduledExecutorService renewals;

    /**
     * One renewal thread per attempt the worker can hold at once: a renewal stuck on a database that
     * went silent (until the JDBC socket timeout) delays only its own lease, never the others'.
     */
    LeaseKeeper(AttemptWork work, WorkerConfig config) {
        this.work = work;
        this.lease = config.worker().lease();
        this.workerId = config.worker().idOrPid();
        AtomicInteger n = new AtomicInteger();
        this.renewals = Executors.newScheduledThreadPool(config.worker().concurrency(), r -> {
            Thread t = new Thread(r, "lease-renewals-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
    }

    /** Runs {@code call} while renewing the attempt's lease. */
    public <T> T whileHeld(UUID attemptId, Supplier<T> call) {
        long every = Math.max(1, lease.toMillis() / 3);
        ScheduledFuture<?> heartbeat =
                renewals.scheduleAtFixedRate(() -> renew(attemptId), every, every, TimeUnit.MILLISECONDS);
        try {
            return call.get();
        } finally {
            heartbeat.cancel(false);
        }
    }

    /** Asked before each resend: is the attempt still starting, and its lease this worker's and live? */
    public SendGuard guardFor(UUID attemptId) {
        return () -> QuarkusTransaction.requiringNew().call(() -> work.holdsLiveLease(attemptId, workerId));
    }

    private void renew(UUID attemptId) {
        try {
            if (!QuarkusTransaction.requiringNew().call(() -> work.renewLease(attemptId, workerId, lease))) {
                LOG.warnf("Lease of attempt %s is no longer this worker's; no resend will go out", attemptId);
            }
        } catch (RuntimeException e) {
            LOG.warnf("Could not renew the lease of attempt %s: %s", attemptId, e.toString());
        }
    }
}
