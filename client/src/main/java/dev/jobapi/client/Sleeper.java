package dev.jobapi.client;

import java.time.Duration;

/** Waits between retries and polls; tests pass one that records instead of sleeping. */
@FunctionalInterface
public interface Sleeper {

    Sleeper REAL = duration -> Thread.sleep(duration.toMillis());

    void sleep(Duration duration) throws InterruptedException;
}
