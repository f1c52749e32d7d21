package dev.jobapi.bench.baseline;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/** What the provider answered for a job, as {@link NaiveWorker} stores it: no unique key, no election. */
@Entity
@Table(name = "baseline_result")
public class BaselineResult {

    @Id
    UUID id;

    @Column(name = "job_id", nullable = false)
    UUID jobId;

    @Column(name = "owner_id", nullable = false)
    String ownerId;

    @Column(name = "output", nullable = false, columnDefinition = "text")
    String output;

    @Column(name = "prompt_tokens")
    Integer promptTokens;

    @Column(name = "completion_tokens")
    Integer completionTokens;

    @Column(name = "created_at", nullable = false)
    Instant createdAt;
}
