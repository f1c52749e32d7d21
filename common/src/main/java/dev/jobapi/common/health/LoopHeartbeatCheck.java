package dev.jobapi.common.health;

import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.util.Map;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Liveness;
import org.eclipse.microprofile.health.Readiness;

/**
 * Live and ready only while every background loop makes progress. A relay whose thread died leaves
 * the HTTP server answering and no job ever starting; this check turns that into a restart.
 */
@Liveness
@Readiness
@ApplicationScoped
public class LoopHeartbeatCheck implements HealthCheck {

    private final LoopHeartbeats heartbeats;

    LoopHeartbeatCheck(LoopHeartbeats heartbeats) {
        this.heartbeats = heartbeats;
    }

    @Override
    public HealthCheckResponse call() {
        Map<String, Duration> stalled = heartbeats.stalled();
        HealthCheckResponseBuilder response =
                HealthCheckResponse.named("background-loops").status(stalled.isEmpty());
        heartbeats.ages().forEach((loop, age) -> response.withData(loop + "-last-round-ms-ago", age.toMillis()));
        return response.build();
    }
}
