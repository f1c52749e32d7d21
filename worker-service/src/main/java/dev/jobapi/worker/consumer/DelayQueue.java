package dev.jobapi.worker.consumer;

import dev.jobapi.common.message.AttemptTopology;
import dev.jobapi.common.message.ConfirmedPublisher;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.List;

/**
 * Parks a message for later: published (confirmed, mandatory) to the delay queue, whose TTL sends it
 * back to the work queue. Used when another worker's lease is live and after a failed delivery,
 * instead of a hot requeue loop that would also spend the message's delivery budget.
 */
@ApplicationScoped
public class DelayQueue {

    private final ConfirmedPublisher publisher;

    DelayQueue(ConfirmedPublisher publisher) {
        this.publisher = publisher;
    }

    public void park(String body) {
        publisher.publish("", AttemptTopology.DELAY_QUEUE, List.of(body));
    }
}
