package dev.jobapi.common.attempt;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/** What a provider reported it spent on one attempt; written once by the worker, never deleted. */
@Entity
@Table(name = "usage_record")
public class UsageRecord {

    @Id
    @Column(name = "attempt_id")
    private UUID attemptId;

    @Column(name = "owner_id", nullable = false, updatable = false)
    private String ownerId;

    @Column(name = "provider", nullable = false, updatable = false)
    private String provider;

    @Column(name = "prompt_tokens")
    private Integer promptTokens;

    @Column(name = "completion_tokens")
    private Integer completionTokens;

    @Column(name = "source", nullable = false)
    private String source;

    @Column(name = "recorded_at", nullable = false)
    private Instant recordedAt;

    protected UsageRecord() {}

    public UUID attemptId() {
        return attemptId;
    }

    public String ownerId() {
        return ownerId;
    }

    public String provider() {
        return provider;
    }

    public Integer promptTokens() {
        return promptTokens;
    }

    public Integer completionTokens() {
        return completionTokens;
    }

    public UsageSource source() {
        return UsageSource.fromWireName(source);
    }

    public Instant recordedAt() {
        return recordedAt;
    }
}
