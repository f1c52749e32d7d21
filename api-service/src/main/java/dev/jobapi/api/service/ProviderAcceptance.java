package dev.jobapi.api.service;

import dev.jobapi.api.problem.Problem;
import dev.jobapi.api.problem.ProblemException;
import dev.jobapi.api.security.Caller;
import dev.jobapi.common.acceptance.AcceptanceConfig;
import dev.jobapi.common.acceptance.AcceptanceRun;
import dev.jobapi.common.acceptance.AcceptanceRuns;
import dev.jobapi.common.audit.AuditTrail;
import dev.jobapi.common.provider.ProviderHealth;
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
                    ProviderPauses.Pause paused,
            @Schema(description = "Its health gate: circuit breaker and announced rate limit") HealthView health,
            @Schema(description = "Its limits, as the newest worker to start was configured with") LimitsView limits,
            @Schema(description = "Its load against those limits now") UsageView usage) {}

    /** A provider's limits (docs/design.md, rule 21); each null when it has none. */
    @Schema(name = "ProviderLimits")
    public record LimitsView(
            @Schema(nullable = true, description = "Calls in flight at once, across workers") Integer maxInFlight,
            @Schema(nullable = true, description = "Calls per UTC minute, across workers") Integer requestsPerMinute,
            @Schema(nullable = true, description = "Tokens per UTC minute, each call counted at the most it may use")
                    Integer tokensPerMinute) {}

    /** A provider's load now: calls in flight, and the requests and tokens counted this UTC minute. */
    @Schema(name = "ProviderUsage")
    public record UsageView(
            @Schema(description = "Calls claimed and not yet recorded, under a live lease") long inFlight,
            @Schema(description = "Calls counted this UTC minute (0 for a provider with no per-minute limit)")
                    int requestsThisMinute,
            @Schema(description = "Tokens counted this UTC minute, each call at the most it may use")
                    long tokensThisMinute) {}

    /** A provider's health gate as every worker shares it (docs/design.md, rule 21). */
    @Schema(name = "ProviderHealth")
    public record HealthView(
            String provider,
            @Schema(enumeration = {"closed", "open", "half_open"}) String breaker,
            @Schema(description = "Calls counted in the current window") int windowCalls,
            @Schema(description = "Of them, the provider's faults (5xx, 429 past every send, unreachable, no answer)")
                    int windowFaults,
            @Schema(nullable = true) Instant openedAt,
            @Schema(nullable = true, description = "When an open breaker lets its probe calls go") Instant retryAt,
            @Schema(nullable = true) String lastFault,
            @Schema(nullable = true, description = "Calls held until then: a rate limit the provider announced")
                    Instant limitedUntil,
            @Schema(nullable = true) String limitReason,
            @Schema(description = "Whether a call may start now") boolean open,
            @Schema(description = "Half open: the probe calls counted so far (0 otherwise)") int probeCalls,
            @Schema(description = "Of them, the provider's faults") int probeFaults,
            @Schema(description = "Half open: the probe calls under way, not yet counted") int probesUnderWay) {

        static HealthView of(ProviderHealth.Standing s) {
            return new HealthView(
                    s.provider(),
                    s.breaker(),
                    s.windowCalls(),
                    s.windowFaults(),
                    s.openedAt(),
                    s.retryAt(),
                    s.lastFault(),
                    s.limitedUntil(),
                    s.limitReason(),
                    s.open(),
                    s.probeCalls(),
                    s.probeFaults(),
                    s.probesUnderWay());
        }
    }

    private final ProviderRegistry providers;
    private final AcceptanceRuns acceptances;
    private final AcceptanceConfig config;
    private final AuditTrail audit;
    private final ProviderPauses pauses;
    private final ProviderHealth health;
    private final Clock clock;

    ProviderAcceptance(
            ProviderRegistry providers,
            AcceptanceRuns acceptances,
            AcceptanceConfig config,
            AuditTrail audit,
            ProviderPauses pauses,
            ProviderHealth health,
            Clock clock) {
        this.health = health;
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
                    ProviderHealth.Load load = health.load(name);
                    return new ProviderStatus(
                            name,
                            refusal.isEmpty(),
                            refusal.orElse(null),
                            acceptances.latest(name).orElse(null),
                            pauses.find(name).orElse(null),
                            HealthView.of(health.standing(name)),
                            new LimitsView(load.maxInFlight(), load.requestsPerMinute(), load.tokensPerMinute()),
                            new UsageView(load.inFlight(), load.requestsThisMinute(), load.tokensThisMinute()));
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
