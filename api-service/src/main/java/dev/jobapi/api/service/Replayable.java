package dev.jobapi.api.service;

/** The result of an idempotent write: the thing, and whether this call made it or replayed it. */
public record Replayable<T>(T value, boolean created) {}
