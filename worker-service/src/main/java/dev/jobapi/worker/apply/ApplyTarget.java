package dev.jobapi.worker.apply;

import java.util.UUID;

/** What an applier needs to know about the job whose winning patch it applies. */
public record ApplyTarget(UUID jobId, UUID attemptId, String baseRef) {}
