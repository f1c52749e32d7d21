package dev.jobapi.client.model;

/** A provider's state after a pause or a resume; {@code reannounced}: held attempts the resume sent on. */
public record ProviderPauseState(String provider, boolean paused, ProviderPause pause, long reannounced) {}
