package dev.jobapi.common.message;

/**
 * A transaction wrote outbox rows. Fired inside that transaction by the code that writes them; the
 * api's relay observes it after a successful commit ({@code TransactionPhase.AFTER_SUCCESS}) and
 * publishes at once, so no caller needs to know that a relay exists. A rolled-back write signals
 * nothing.
 */
public record OutboxWritten() {}
