package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.acceptance.AcceptanceConfig;
import dev.jobapi.common.acceptance.AcceptanceRun;
import dev.jobapi.common.acceptance.AcceptanceRuns;
import dev.jobapi.common.audit.AuditTrail;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;
import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * Operators' view of how providers earn automatic fallback (docs/design.md, rule 12): request an
 * acceptance run (a worker runs it), follow its progress, see who may be picked automatically now.
 */
@ApplicationScoped
public class ProviderAcceptance {

    /**
     * One provider: whether it has earned automatic fallback (its newest finished run passed within
     * the freshness) and, when not, why; and its newest run, which may still be going. The worker's
     * {@code jobapi.provider.<name>.automatic-fallback} must allow the provider too.
     */
    public record ProviderStatus(
            String name,
            boolean accepted,
            @Schema(nullable = true) String refusal,
            @Schema(nullable = true) AcceptanceRun latestRun,
            @Schema(nullable = true, description = "Set while an operator has the provider paused")
                    ProviderPauses.Pause paused) {}

    private final ProviderRegistry providers;
    private final AcceptanceRuns acceptances;
    private final AcceptanceConfig config;
    private final AuditTrail audit;
    private final ProviderPauses pauses;
    private final Clock clock;

    ProviderAcceptance(
            ProviderRegistry providers,
            AcceptanceRuns acceptances,
            AcceptanceConfig config,
            AuditTrail audit,
            ProviderPauses pauses,
            Clock clock) {
        this.providers = providers;
        this.acceptances = acceptances;
        this.config = config;
        this.audit = audit;
        this.pauses = pauses;
        this.clock = clock;
    }

    @Transactional
    public List<ProviderStatus> statuses() {
        Instant now = clock.instant();
        return providers.names().stream()
                .map(name -> {
                    var refusal = acceptances.refusal(name, config.freshness(), now);
                    return new ProviderStatus(
                            name,
                            refusal.isEmpty(),
                            refusal.orElse(null),
                            acceptances.latest(name).orElse(null),
                            pauses.find(name).orElse(null));
                })
                .toList();
    }

    /**
     * Asks for a run of the provider's acceptance fixtures; a run already waiting or going is
     * returned instead of a second one.
     *
     * @return the run, and whether this call requested it
     */
    @Transactional
    public Replayable<AcceptanceRun> request(Caller operator, String provider) {
        providers.requireKnown(provider);
        AcceptanceRuns.Requested requested = acceptances.request(provider, operator.subject(), clock.instant());
        if (requested.created()) {
            audit.record(
                    operator.subject(),
                    "provider.acceptance.requested",
                    null,
                    null,
                    null,
                    "provider " + provider + ", run " + requested.run().id());
        }
        return new Replayable<>(requested.run(), requested.created());
    }

    @Transactional
    public AcceptanceRun run(String provider, UUID runId) {
        providers.requireKnown(provider);
        return acceptances
                .find(runId)
                .filter(run -> run.provider().equals(provider))
                .orElseThrow(() -> new ProblemException(
                        Problem.NOT_FOUND, "Provider " + provider + " has no acceptance run " + runId + "."));
    }
}
