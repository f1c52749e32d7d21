package dev.jobapi.client;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/** Keys kept for the life of the process: enough for retries and for a caller that tries again. */
public final class InMemoryIdempotencyKeys implements IdempotencyKeys {

    private final Map<String, String> pending = new ConcurrentHashMap<>();

    @Override
    public String keyFor(String intention) {
        return pending.computeIfAbsent(intention, i -> UUID.randomUUID().toString());
    }

    @Override
    public void settle(String intention) {
        pending.remove(intention);
    }
}
