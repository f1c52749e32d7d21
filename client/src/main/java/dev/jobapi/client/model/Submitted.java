package dev.jobapi.client.model;

/**
 * What a create call came back with: the resource, the Idempotency-Key it was sent with (keep it to
 * replay the same intention), and whether the API replayed an earlier request with that key.
 */
public record Submitted<T>(T value, String idempotencyKey, boolean replayed) {}
