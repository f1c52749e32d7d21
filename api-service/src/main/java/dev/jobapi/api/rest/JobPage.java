package dev.jobapi.api.rest;

import java.util.List;

/** One page of GET /jobs; {@code nextCursor} is null on the last page. */
public record JobPage(List<JobSummary> items, String nextCursor) {}
