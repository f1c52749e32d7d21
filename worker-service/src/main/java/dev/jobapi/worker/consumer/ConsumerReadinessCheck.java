package dev.jobapi.worker.consumer;

import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.Readiness;

/**
 * Ready only while the broker delivers attempt messages to this worker. A consumer the broker
 * cancelled (its queue deleted) or a lost connection shows here until the subscription loop has
 * subscribed again; a rollout waits for it before stopping the next worker.
 */
@Readiness
@ApplicationScoped
public class ConsumerReadinessCheck implements HealthCheck {

    private final AttemptConsumer consumer;

    ConsumerReadinessCheck(AttemptConsumer consumer) {
        this.consumer = consumer;
    }

    @Override
    public HealthCheckResponse call() {
        return HealthCheckResponse.named("attempt-consumer")
                .status(consumer.subscribed())
                .build();
    }
}
