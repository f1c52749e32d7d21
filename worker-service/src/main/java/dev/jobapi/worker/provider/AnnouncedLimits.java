package dev.jobapi.worker.provider;

import java.time.Duration;

/**
 * Where an adapter reports a rate limit the provider announced in its headers: a {@code retry-after},
 * or a remaining count of 0 with the time to its reset. Every worker then holds the provider's calls
 * for that long (docs/design.md, rule 21).
 */
public interface AnnouncedLimits {

    void announced(String provider, Duration wait, String reason);
}
