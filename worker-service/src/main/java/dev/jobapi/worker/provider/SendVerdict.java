package dev.jobapi.worker.provider;

import java.io.IOException;
import java.net.ConnectException;
import java.net.UnknownHostException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.apache.hc.client5.http.ConnectTimeoutException;

/**
 * The retry decision table's rows for one send (docs/design.md, "Retry decision table"): what a
 * send's failure, or the status the provider answered, says about whether the provider took the
 * request. The one place the table is decided; {@link StreamingHttpProvider} acts on the verdict.
 */
enum SendVerdict {
    /**
     * It never left us (refused, connect timeout, TLS handshake or the server's certificate, host not
     * resolved): send again.
     */
    NOT_SENT,
    /** It left us and nothing says the provider did not take it: unknown, never sent again. */
    SENT_UNKNOWN,
    /** The provider answered that it did not take it (429, any 5xx, with a readable body): send again. */
    DECLINED,
    /** The provider refused it for good (any other error status, with a readable body): failed. */
    REFUSED,
    /** 200: the answer's stream follows. */
    ANSWERING;

    /**
     * A send that threw before any status came back. Only the failures of the connection's setup,
     * which the client throws before it writes a byte of the request, say it never left us; every
     * other (a read timeout, a reset, a connection closed under the request, an abort) may come after
     * the provider took it.
     */
    static SendVerdict ofSendFailure(IOException failure) {
        if (failure instanceof ConnectException
                || failure instanceof ConnectTimeoutException
                || failure instanceof SSLHandshakeException
                || failure instanceof SSLPeerUnverifiedException
                || failure instanceof UnknownHostException) {
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
