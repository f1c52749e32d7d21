package dev.jobapi.client.model;

import java.util.List;

/** One page of GET /jobs, newest first; {@code nextCursor} is null on the last page. */
public record JobPage(List<JobSummary> items, String nextCursor) {}
