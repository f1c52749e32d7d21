package dev.jobapi.worker.provider;

import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpConnectTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import javax.net.ssl.SSLHandshakeException;

/**
 * The retry decision table's rows for one send (docs/design.md, "Retry decision table"): what a
 * send's failure, or the status the provider answered, says about whether the provider took the
 * request. The one place the table is decided; {@link StreamingHttpProvider} acts on the verdict.
 */
enum SendVerdict {
    /** It never left us (refused, connect timeout, TLS handshake, host not resolved): send again. */
    NOT_SENT,
    /** It left us and nothing says the provider did not take it: unknown, never sent again. */
    SENT_UNKNOWN,
    /** The provider answered that it did not take it (429, any 5xx, with a readable body): send again. */
    DECLINED,
    /** The provider refused it for good (any other error status, with a readable body): failed. */
    REFUSED,
    /** 200: the answer's stream follows. */
    ANSWERING;

    /** A send that threw before any status came back. */
    static SendVerdict ofSendFailure(IOException failure) {
        // HttpConnectTimeoutException is an HttpTimeoutException: this test comes before any for a
        // read timeout, which means the request left us.
        if (failure instanceof ConnectException
                || failure instanceof HttpConnectTimeoutException
                || failure instanceof SSLHandshakeException
                || failure.getCause() instanceof UnresolvedAddressException) {
            return NOT_SENT;
        }
        return SENT_UNKNOWN;
    }

    /**
     * A status line; {@code errorBodyRead} says whether an error status's body arrived whole within
     * its bound (one that stalls leaves the provider in no state we can read).
     */
    static SendVerdict ofStatus(int status, boolean errorBodyRead) {
        if (status == 200) {
            return ANSWERING;
        }
        if (!errorBodyRead) {
            return SENT_UNKNOWN;
        }
        // Anthropic's 529 "overloaded" is a 5xx too.
        return status == 429 || status >= 500 ? DECLINED : REFUSED;
    }

    /** Whether the same request may go out again (within the sends and the deadline left). */
    boolean sendAgain() {
        return this == NOT_SENT || this == DECLINED;
    }
}
