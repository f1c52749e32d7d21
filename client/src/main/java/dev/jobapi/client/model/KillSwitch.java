package dev.jobapi.client.model;

import java.time.Instant;

/** The kill switch for new fallback attempts: its position, who set it, when and why. */
public record KillSwitch(boolean enabled, String reason, String setBy, Instant setAt) {}
