package dev.jobapi.common.webhook;

import java.util.Arrays;
import java.util.Locale;
import java.util.Optional;

/**
 * The life of one webhook delivery, as webhook_delivery's CHECK constraint names them (docs/design.md,
 * "Push: webhooks"): pending until a try is answered 2xx (delivered) or its retries run out (failed);
 * an owner's retry of a failed delivery makes it pending again.
 */
public enum WebhookDeliveryState {
    PENDING,
    DELIVERED,
    FAILED;

    /** The stored and shown name, such as {@code pending}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** The state with this wire name, if any. */
    public static Optional<WebhookDeliveryState> fromWireName(String wireName) {
        return Arrays.stream(values())
                .filter(state -> state.wireName().equals(wireName))
                .findFirst();
    }
}
