package dev.jobapi.common.attempt;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/** The stored output of an attempt, written once by the worker; every later step reads these bytes. */
@Entity
@Table(name = "generation")
public class Generation {

    @Id
    @Column(name = "attempt_id")
    private UUID attemptId;

    @Column(name = "patch", nullable = false, updatable = false)
    private byte[] patch;

    @Column(name = "output_digest", nullable = false, updatable = false)
    private String outputDigest;

    @Column(name = "created_at", nullable = false, updatable = false)
    private Instant createdAt;

    protected Generation() {}

    public UUID attemptId() {
        return attemptId;
    }

    public byte[] patch() {
        return patch.clone();
    }

    public String outputDigest() {
        return outputDigest;
    }

    public Instant createdAt() {
        return createdAt;
    }
}
