package dev.jobapi.bench.baseline;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import java.time.Instant;
import java.util.UUID;

/** A job row with no unique key: every request inserts one, however often it is repeated. */
@Entity
@Table(name = "baseline_job")
public class BaselineJob {

    @Id
    UUID id;

    @Column(name = "owner_id", nullable = false)
    String ownerId;

    @Column(name = "idempotency_key", nullable = false)
    String idempotencyKey;

    @Column(name = "input", nullable = false, columnDefinition = "text")
    String input;

    @Column(name = "provider", nullable = false)
    String provider;

    @Column(name = "state", nullable = false)
    String state;

    @Column(name = "created_at", nullable = false)
    Instant createdAt;
}
