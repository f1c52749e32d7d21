package dev.jobapi.common.time;

import io.quarkus.arc.DefaultBean;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;
import java.time.Clock;

/** Provides the clock every service reads time from, so tests can substitute their own. */
public class ClockProducer {

    @Produces
    @Singleton
    @DefaultBean
    Clock systemClock() {
        return Clock.systemUTC();
    }
}
