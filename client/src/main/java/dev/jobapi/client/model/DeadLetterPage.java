package dev.jobapi.client.model;

import java.util.List;

/** One page of dead letters, how many match its filter ({@code depth}), and the next page's cursor. */
public record DeadLetterPage(List<DeadLetter> items, long depth, int offset, int limit, String next) {}
