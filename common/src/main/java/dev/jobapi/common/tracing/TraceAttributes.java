package dev.jobapi.common.tracing;

import io.opentelemetry.api.common.AttributeKey;

/**
 * The names of the attributes jobapi puts on its spans. Stable: dashboards and trace queries use
 * them ({@code jobapi.job_id = ...} finds every span of a job, in both services). The messaging ones
 * are OpenTelemetry's semantic conventions.
 */
public final class TraceAttributes {

    /** On every span jobapi makes: the job and the attempt it works on. */
    public static final AttributeKey<String> JOB_ID = AttributeKey.stringKey("jobapi.job_id");

    public static final AttributeKey<String> ATTEMPT_ID = AttributeKey.stringKey("jobapi.attempt_id");

    /** The claim's decision: what the delivery goes on to do (call, park, elect, ...). */
    public static final AttributeKey<String> CLAIM_NEXT = AttributeKey.stringKey("jobapi.claim.next");

    /**
     * The provider call: the attempt's provider name, the model sent, the tokens the provider reported
     * (OpenTelemetry's GenAI semantic conventions' names, so GenAI dashboards read them as they are).
     */
    public static final AttributeKey<String> PROVIDER = AttributeKey.stringKey("jobapi.provider");

    public static final AttributeKey<String> MODEL = AttributeKey.stringKey("jobapi.model");
    public static final AttributeKey<Long> TOKENS_IN = AttributeKey.longKey("gen_ai.usage.input_tokens");
    public static final AttributeKey<Long> TOKENS_OUT = AttributeKey.longKey("gen_ai.usage.output_tokens");

    /**
     * On the record step: what the provider's reported usage cost in US dollars at the price in force
     * at the claim (rule 20); absent when no price was set.
     */
    public static final AttributeKey<Double> COST_USD = AttributeKey.doubleKey("jobapi.cost_usd");

    /** What a step came to: the provider's outcome, whether the record goes on to the election. */
    public static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("jobapi.outcome");

    /** The election: whether this attempt won its job. */
    public static final AttributeKey<Boolean> ELECTED = AttributeKey.booleanKey("jobapi.elected");

    /** The apply: where (the applier's scope: repository and branch) and under which apply key. */
    public static final AttributeKey<String> APPLY_TARGET = AttributeKey.stringKey("jobapi.apply.target");

    public static final AttributeKey<String> APPLY_KEY = AttributeKey.stringKey("jobapi.apply.key");

    public static final AttributeKey<String> MESSAGING_SYSTEM = AttributeKey.stringKey("messaging.system");
    public static final AttributeKey<String> MESSAGING_DESTINATION =
            AttributeKey.stringKey("messaging.destination.name");
    public static final AttributeKey<String> MESSAGING_OPERATION = AttributeKey.stringKey("messaging.operation.type");

    private TraceAttributes() {}
}
