package dev.jobapi.api.mapping;

import java.util.List;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** One page of GET /jobs; {@code nextCursor} is null on the last page. */
public record JobPage(List<JobSummary> items, @Schema(nullable = true) String nextCursor) {}
