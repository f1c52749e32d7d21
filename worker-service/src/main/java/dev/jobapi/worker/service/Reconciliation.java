package dev.jobapi.worker.service;

import dev.jobapi.common.attempt.Attempt;
import dev.jobapi.common.callback.CallbackInbox;
import dev.jobapi.worker.provider.ProviderOutcome;
import dev.jobapi.worker.provider.ProviderRegistry;
import dev.jobapi.worker.service.AttemptSteps.Loaded;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.Optional;
import java.util.UUID;

/**
 * Reconciliation (rule 5): what became of an attempt whose answer was lost, from the signed
 * callback the provider pushed or, when none came, from asking the provider. A found answer is
 * recorded like a call's ({@link RecordStep}, origin lookup) and goes through the same election and
 * apply; for an attempt superseded meanwhile it is recorded (output and usage: no silent spend) and
 * never applied. Nothing found: the attempt stays as it is, for a later round. {@link
 * AttemptPipeline#reconcile} orders the parts.
 */
@ApplicationScoped
public class Reconciliation {

    /** What a lookup needs, read in a step: whom to ask, and the callback the provider pushed, if any. */
    record Question(UUID attemptId, String provider, String remoteId, Optional<ProviderOutcome> callback) {}

    private final ProviderRegistry providers;
    private final CallbackInbox callbacks;

    Reconciliation(ProviderRegistry providers, CallbackInbox callbacks) {
        this.providers = providers;
        this.callbacks = callbacks;
    }

    /** Inside a step: the attempt's provider and a verified callback, read like a lookup's answer. */
    Question question(Loaded step) {
        Attempt attempt = step.attempt();
        Optional<ProviderOutcome> callback = callbacks
                .find(attempt.id())
                .map(found -> ProviderOutcome.answer(
                        found.remoteId(),
                        found.output(),
                        found.promptTokens() == null
                                ? null
                                : new ProviderOutcome.Usage(found.promptTokens(), found.completionTokens())));
        return new Question(attempt.id(), attempt.provider(), attempt.remoteId(), callback);
    }

    /** Outside any transaction: the callback's answer, else the provider's, when it has one. */
    Optional<ProviderOutcome> answer(Question question) {
        return question.callback()
                .or(() -> providers.forName(question.provider()).lookup(question.attemptId(), question.remoteId()));
    }
}
