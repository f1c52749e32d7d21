package dev.jobapi.api.tracing;

import dev.jobapi.api.security.BearerTokens;
import io.opentelemetry.context.Context;
import io.opentelemetry.context.propagation.TextMapGetter;
import io.opentelemetry.context.propagation.TextMapPropagator;
import io.opentelemetry.context.propagation.TextMapSetter;
import io.vertx.core.spi.observability.HttpRequest;
import java.util.Collection;

/**
 * A configured propagator that extracts from an HTTP request only when its {@code Authorization}
 * header carries a token of ours ({@link TraceContextFromKnownCallers} says why). Every other carrier,
 * and every injection, is the configured propagator's.
 */
final class KnownCallerPropagator implements TextMapPropagator {

    private final TextMapPropagator configured;
    private final BearerTokens tokens;

    KnownCallerPropagator(TextMapPropagator configured, BearerTokens tokens) {
        this.configured = configured;
        this.tokens = tokens;
    }

    @Override
    public Collection<String> fields() {
        return configured.fields();
    }

    @Override
    public <C> void inject(Context context, C carrier, TextMapSetter<C> setter) {
        configured.inject(context, carrier, setter);
    }

    @Override
    public <C> Context extract(Context context, C carrier, TextMapGetter<C> getter) {
        if (carrier instanceof HttpRequest && !tokens.known(getter.get(carrier, "authorization"))) {
            return context;
        }
        return configured.extract(context, carrier, getter);
    }
}
