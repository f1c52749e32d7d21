package dev.jobapi.api.rest;

import dev.jobapi.common.tracing.RequestIds;
import io.quarkus.vertx.http.runtime.filters.Filters;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Singleton;

/**
 * Gives every request on the public port its id before anything else looks at it: the client's
 * {@code X-Request-Id} when well formed ({@link RequestIds#PATTERN}), a new UUID otherwise. The id is
 * answered in the response's {@code X-Request-Id} (whatever the answer, the guard's refusals and the
 * page's files included), kept in the request's logging context, which Quarkus holds per request
 * across the event loop and the worker thread, so every log line and every problem of the request
 * carries it, and written with any outbox row the request makes.
 */
@Singleton
public class RequestIdFilter {

    // Before UploadGuard (10), whose refusals must carry the id too.
    void install(@Observes Filters filters) {
        filters.register(this::identify, 20);
    }

    private void identify(RoutingContext context) {
        String id = RequestIds.takeOrMint(context.request().getHeader(RequestIds.HTTP_HEADER));
        RequestIds.enter(id);
        context.response().putHeader(RequestIds.HTTP_HEADER, id);
        context.next();
    }
}
