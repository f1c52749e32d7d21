package dev.jobapi.bench;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * N users, each sending its next request when its last one was answered. Measures what the
 * service does at that concurrency; its latencies hide the waiting a slow answer causes (the
 * open loop does not).
 */
final class ClosedLoop {

    private ClosedLoop() {}

    /** Runs the loop. */
    static Measurement.Result run(Options options, HttpClient client, Scenario scenario) throws InterruptedException {
        long start = System.nanoTime();
        boolean counted = options.requests() > 0;
        long windowStart = start + options.warmup().toNanos();
        long windowEnd =
                counted ? Long.MAX_VALUE : windowStart + options.duration().toNanos();
        Measurement measurement = new Measurement(windowStart, windowEnd, scenario.expectedStatus());
        AtomicLong ticketsLeft = new AtomicLong(options.requests());

        List<Thread> users = new ArrayList<>();
        for (int i = 0; i < options.concurrency(); i++) {
            Thread user = new Thread(
                    () -> {
                        while (counted ? ticketsLeft.getAndDecrement() > 0 : System.nanoTime() < windowEnd) {
                            long sent = System.nanoTime();
                            try {
                                HttpResponse<String> response =
                                        client.send(scenario.next(), HttpResponse.BodyHandlers.ofString());
                                measurement.answered(sent, System.nanoTime(), response);
                            } catch (IOException e) {
                                measurement.failedToAnswer(sent, e);
                            } catch (InterruptedException e) {
                                Thread.currentThread().interrupt();
                                return;
                            }
                        }
                    },
                    "user-" + i);
            users.add(user);
            user.start();
        }
        for (Thread user : users) {
            user.join();
        }
        long measuredNanos = counted ? System.nanoTime() - start : windowEnd - windowStart;
        return measurement.result(options.label(), options, measuredNanos / 1e9);
    }
}
