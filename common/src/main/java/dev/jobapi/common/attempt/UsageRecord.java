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

    /**
     * The most tokens one count of one attempt may hold. No model reads or writes ten million tokens
     * in one request; a count past it is a provider's or a caller's error, never spend to believe,
     * and two such counts still add up far inside an int.
     */
    public static final int MAX_TOKENS = 10_000_000;

    /** Whether {@code count} is a token count to believe: from 0 to {@link #MAX_TOKENS}. */
    public static boolean isPlausible(long count) {
        return count >= 0 && count <= MAX_TOKENS;
    }

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
