package dev.jobapi.client.model;

/** A provider: has it earned automatic fallback, why not, and its newest acceptance run (null: none). */
public record ProviderStatus(String name, boolean accepted, String refusal, AcceptanceRun latestRun) {}
