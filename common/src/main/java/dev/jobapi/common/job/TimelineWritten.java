package dev.jobapi.common.job;

import java.util.Set;
import java.util.UUID;

/**
 * A transaction wrote to the timelines of these jobs. Fired inside it by {@link JobEvents}; observed
 * after a successful commit, so a rolled-back write tells nobody anything.
 */
public record TimelineWritten(Set<UUID> jobIds) {}
