package dev.jobapi.api.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** Every setting of the api-service, with its default and why it has that value. */
@ConfigMapping(prefix = "jobapi")
public interface JobApiConfig {

    Intake intake();

    Outbox outbox();

    Queries queries();

    Providers providers();

    Retention retention();

    Callbacks callbacks();

    Bulk bulk();

    Streams streams();

    Webhooks webhooks();

    DeadLetters deadLetters();

    /**
     * The address clients reach this API at, without a trailing slash. Problem types are absolute URIs
     * under it ({@code <base>/problems/<code>}, RFC 9457 section 3.1.1), each a page this API serves;
     * configured, never taken from the request's Host header. The default is the local {@code bin/dev up}.
     */
    @WithDefault("http://127.0.0.1:8080")
    java.net.URI publicBaseUri();

    /** The mover that takes dead letters from the broker into the database. */
    interface DeadLetters {
        /**
         * How long its subscription may receive nothing, with nothing in hand, before it subscribes
         * again: a consumer the broker stopped serving holds its dead letters, unacknowledged, until
         * its connection closes.
         */
        @WithDefault("60s")
        Duration renewQuietAfter();
    }

    /** Signed provider callbacks (POST /callbacks/{provider}). */
    interface Callbacks {
        /** Per provider, {@code jobapi.callbacks.provider.<name>.*}. */
        Map<String, CallbackProvider> provider();

        /** One provider that calls back. */
        interface CallbackProvider {
            /**
             * Its HMAC secret; in production from the environment ({@code =${OPENAI_CALLBACK_SECRET:}}).
             * Absent or empty: the provider has no callback endpoint.
             */
            Optional<String> secret();

            /**
             * A callback body of this provider, answered 413 past it. The body is read before its
             * HMAC can be checked, so it is the one body taken from a caller not yet known: a
             * callback carries one patch and its usage, and 256 KiB is far above any real one while
             * a quarter of what a bearer-token caller may send.
             */
            @WithDefault("262144")
            int maxBodyBytes();

            /**
             * Callback bodies of this provider being read at once, across all addresses; past it,
             * 429 at once. A provider calls back for attempts it lost track of, a few at a time.
             */
            @WithDefault("8")
            int maxInFlight();
        }

        /**
         * A signature older or newer than this is refused, so a captured callback cannot be replayed
         * later; five minutes absorbs clock skew and the provider's own retries.
         */
        @WithDefault("5m")
        Duration window();
    }

    /** Limits on what a client may send. */
    interface Intake {
        /** 1 MiB: a prompt plus repository context fits; anything larger is a mistake or an attack. */
        @WithDefault("1048576")
        int maxBodyBytes();

        /** Deeper nesting than this is never a real job input and costs stack to canonicalise. */
        @WithDefault("32")
        int maxNestingDepth();

        /**
         * JSON values (objects, arrays, strings, numbers, ...) in one body. A prompt with its context is a
         * few dozen values; ten thousand leaves room for structured context while a body of a million
         * empty arrays, which costs far more heap as a tree than on the wire, is refused.
         */
        @WithDefault("10000")
        int maxElements();

        /**
         * A job's input as stored (canonical JSON, UTF-8). Half the body limit: every read of a job
         * materialises it, so it bounds what one GET /jobs/{id} costs.
         */
        @WithDefault("524288")
        int maxInputBytes();

        /**
         * A request's body must arrive whole within this, or the request is answered 408 and its
         * connection closed: a body trickling in holds memory and a connection for as long as the client
         * likes. Twenty seconds carries the largest body (1 MiB) at 512 kbit/s.
         */
        @WithDefault("20s")
        Duration bodyTimeout();

        /**
         * Requests with a body in flight at once from one peer address; past it, 429 at once. 256 is far
         * above what one real client sends (the load generator's 64) and far below what fills the heap.
         * Behind an ingress controller every client shares the controller's address: raise it there, or
         * set 0 for no bound.
         */
        @WithDefault("256")
        int maxUploadsPerClient();

        /**
         * Bytes of request bodies being read at once across all clients (a body counts its declared
         * length, or its limit when chunked); past it, 503 {@code server-busy} with Retry-After. 64
         * MiB bounds the heap that uploads can hold, whatever the number of addresses they come from.
         */
        @WithDefault("67108864")
        long maxBodyBytesInFlight();

        /**
         * Proxies (addresses or CIDR ranges) whose {@code X-Forwarded-For} names the client: the client
         * is the right-most address in it that is not one of these. Off by default: the peer address is
         * the client, and a forwarded header, which anyone can send, is ignored. Behind an ingress
         * controller, name its addresses here so that the per-client bound counts clients, not the
         * controller.
         */
        Optional<List<String>> trustedProxies();

        /**
         * The request target (path and query), answered 414 past it. No URL of this API needs more
         * than a few hundred characters; 4 KiB is what Vert.x's codec allowed before. The codec's own
         * bound (quarkus.http.limits.max-initial-line-length) is kept larger, so this API's problem
         * answers first.
         */
        @WithDefault("4096")
        int maxUriLength();

        /**
         * All header names and values of a request together, answered 431 past it: a token of a few
         * kilobytes fits many times. 20 KiB is Vert.x's default; its codec bound
         * (quarkus.http.limits.max-header-size) is kept larger, so this API's problem answers first.
         */
        @WithDefault("20480")
        int maxHeaderBytes();

        /** A reason (supersede, kill switch, resolve) is a sentence or two for the audit trail. */
        @WithDefault("1000")
        int maxReasonLength();
    }

    /** The share of the connection pool that reads may take. */
    interface Queries {
        /**
         * GET /jobs pages read at once; a page past it waits up to {@link #listWait()} for a turn, then
         * is answered 503 {@code server-busy} with Retry-After. Eight of the pool's twenty connections:
         * the rest stay for intake, attempt requests, callbacks, the outbox relay and readiness, so
         * clients paging at once cannot starve them (issue 31: 40 pages in parallel took the pool).
         */
        @WithDefault("8")
        int maxConcurrentLists();

        /** How long a page waits for a turn before 503; short, so a crowd is shed rather than queued. */
        @WithDefault("1s")
        Duration listWait();
    }

    /** The relay that moves committed outbox rows to RabbitMQ. */
    interface Outbox {
        /**
         * The relay also wakes right after each commit in this replica; the poll only picks up rows
         * that other (possibly crashed) replicas left behind, so one second is plenty.
         */
        @WithDefault("1s")
        Duration pollInterval();

        /** Rows claimed per round; bounded so one replica's lock set stays small. */
        @WithDefault("100")
        int batchSize();

        /** How long to wait for a broker confirm before the round gives up and retries the row later. */
        @WithDefault("10s")
        Duration confirmTimeout();

        /**
         * Messages the relay lets wait ready in the work queue. Past that, unsent rows wait in the
         * outbox, where each round takes the owners in turn: one owner's backlog delays another
         * owner's next job by at most this many messages and those the workers hold prefetched.
         * Small, so a newcomer's job is near the front; enough that the relay, looking again every
         * {@link #queueRecheck()}, keeps the workers busy.
         */
        @WithDefault("32")
        int queueAhead();

        /** How soon the relay looks at the work queue again while rows wait for room in it. */
        @WithDefault("100ms")
        Duration queueRecheck();
    }

    /**
     * The providers a client may name; the worker holds how to reach each one. No default: a build
     * knows no provider until its deployment names them (local runs: dev/config/api-service.properties).
     */
    interface Providers {
        /** Every name a client may use; none: every job is refused with unknown-provider. */
        Optional<List<String>> names();

        /** Used when a job names no provider; none: a job has to name one. */
        Optional<String> defaultProvider();
    }

    /** What the pruner deletes, and when. Nothing of the usage ledger or the audit trail is ever pruned. */
    interface Retention {
        /** How often a replica looks; one replica prunes at a time (an advisory lock). */
        @WithDefault("1h")
        Duration interval();

        /** Rows deleted per statement, so a prune never holds long locks. */
        @WithDefault("500")
        int batchSize();

        /** Outputs of losing attempts are kept this long for diagnostics, then deleted. */
        @WithDefault("7d")
        Duration losingOutputAge();

        /**
         * Apply keys of completed or cancelled jobs are kept past any redelivery or replay window:
         * the DLQ is drained by operators within days, so thirty days is a wide margin.
         */
        @WithDefault("30d")
        Duration appliedKeyAge();

        /**
         * Outbox rows the broker confirmed, of attempts that ended, are kept this long, then deleted:
         * nothing reads them but a late callback's or a recovery's link to the request's trace.
         */
        @WithDefault("7d")
        Duration sentOutboxAge();
    }

    /** Operators' bulk actions by filter (bulk.BulkActions). */
    interface Bulk {
        /**
         * How long a dry run's token may be presented: long enough to read the sample and confirm,
         * short enough that a set counted long ago is counted again.
         */
        @WithDefault("15m")
        Duration tokenTtl();

        /** How often each replica's runner looks for bulk actions with items left (large sets run there). */
        @WithDefault("1s")
        Duration interval();

        /**
         * How long one round of the runner works before it lets the loop beat its heartbeat; the next
         * round continues where it stopped.
         */
        @WithDefault("20s")
        Duration roundBudget();
    }

    /** The events streams of jobs (GET /jobs/{id}/events, docs/design.md "Push"). */
    interface Streams {
        /**
         * Streams one caller may hold open on one api process; past it, 429 too-many-streams. The page
         * opens one per job on screen, a client one per job it waits for.
         */
        @WithDefault("20")
        int perCaller();

        /**
         * Streams one api process holds open; past it, 503 server-busy (the load balancer's next try
         * may reach another process). Each costs a connection, a little memory and a read of the
         * job's events per reread.
         */
        @WithDefault("2000")
        int perProcess();

        /**
         * How often every open stream reads its job's events even without a notice (a notice lost
         * with a broker node, or the listener resubscribing), so a lost notice costs at most this.
         */
        @WithDefault("5s")
        Duration reread();

        /**
         * A stream that sent nothing for this long sends a comment: proxies keep the connection open,
         * and a client gone away is noticed by the failed write.
         */
        @WithDefault("15s")
        Duration heartbeat();

        /** The longest one event may take to reach the client's connection before the stream is closed. */
        @WithDefault("10s")
        Duration sendTimeout();
    }

    /** Outgoing webhooks (docs/design.md "Push: webhooks"). */
    interface Webhooks {
        /**
         * Whether an endpoint may be on loopback, link-local, private or other non-public addresses.
         * Off in production: a registered URL must not reach the cluster's own services or a cloud
         * metadata address (SSRF). Local runs and tests, whose receivers listen on 127.0.0.1, allow it.
         */
        @WithDefault("false")
        boolean allowPrivateDestinations();

        /** Whether an endpoint must use https: a delivery carries a job's events in the clear otherwise. */
        @WithDefault("true")
        boolean requireHttps();

        /** Endpoints one owner may have; past it, 409 webhook-limit-reached. */
        @WithDefault("20")
        int maxEndpointsPerOwner();

        /** How often each api process looks for due deliveries (the scheduler's tick is 1 s at the least). */
        @WithDefault("1s")
        Duration pollInterval();

        /** Deliveries one process sends per round, at once. */
        @WithDefault("50")
        int batchSize();

        /**
         * One try's time to connect and be answered. The specification suggests 15-30 s; a receiver
         * should answer at once and do its work afterwards.
         */
        @WithDefault("15s")
        Duration requestTimeout();

        /** The wait after a first failed try; each further failure doubles it, with jitter. */
        @WithDefault("5s")
        Duration firstRetry();

        /** The longest wait between two tries. */
        @WithDefault("1h")
        Duration longestRetry();

        /**
         * How long a delivery is retried before it is marked failed (and visible in the endpoint's
         * delivery log, where its owner may retry it). Three days, as the specification's example
         * schedule: a receiver down over a weekend still gets its events.
         */
        @WithDefault("72h")
        Duration giveUpAfter();

        /** How long the old secret still signs beside the new one after a rotation. */
        @WithDefault("24h")
        Duration secretOverlap();
    }
}
