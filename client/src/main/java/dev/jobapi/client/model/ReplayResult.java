package dev.jobapi.client.model;

import java.util.List;

/** What POST /admin/dlq/replay did: skipped messages belonged to attempts with nothing left to do. */
public record ReplayResult(int replayed, int skipped, List<String> replayedIds, List<String> skippedIds) {}
