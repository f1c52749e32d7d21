package dev.jobapi.bench;

import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.util.concurrent.Semaphore;
import java.util.concurrent.locks.LockSupport;

/**
 * Requests at a fixed rate, whatever the service does. Request i is due at start + i / rate and
 * its latency counts from then, not from when it actually went out: when the service stalls, the
 * requests that should have gone out meanwhile carry the stall in their latency instead of being
 * silently not sent (coordinated omission). At most --concurrency requests are in flight; a full
 * window delays sending, never the clock the latency is measured from.
 */
final class OpenLoop {

    private OpenLoop() {}

    /** Runs the schedule. */
    static Measurement.Result run(Options options, HttpClient client, Scenario scenario) throws InterruptedException {
        long start = System.nanoTime();
        long windowStart = start + options.warmup().toNanos();
        long windowEnd = windowStart + options.duration().toNanos();
        Measurement measurement = new Measurement(windowStart, windowEnd, scenario.expectedStatus());
        double intervalNanos = 1e9 / options.rate();
        Semaphore inFlight = new Semaphore(options.concurrency());

        for (long i = 0; ; i++) {
            long due = start + Math.round(i * intervalNanos);
            if (due >= windowEnd) {
                break;
            }
            for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime()) {
                LockSupport.parkNanos(wait);
            }
            inFlight.acquire();
            client.sendAsync(scenario.next(), HttpResponse.BodyHandlers.ofString())
                    .whenComplete((response, failure) -> {
                        long answered = System.nanoTime();
                        if (failure != null) {
                            measurement.failedToAnswer(due, failure);
                        } else {
                            measurement.answered(due, answered, response);
                        }
                        inFlight.release();
                    });
        }
        // Every request due in the window is answered (or failed) before the line is written.
        inFlight.acquire(options.concurrency());
        return measurement.result(options.label(), options, (windowEnd - windowStart) / 1e9);
    }
}
