package dev.jobapi.client.model;

import java.util.List;

/** One page of the dead-letter queue and the queue's depth. */
public record DeadLetterPage(List<DeadLetter> items, long depth, int offset, int limit) {}
