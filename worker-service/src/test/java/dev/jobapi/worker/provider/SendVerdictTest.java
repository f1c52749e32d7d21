package dev.jobapi.worker.provider;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLPeerUnverifiedException;
import org.apache.hc.client5.http.ConnectTimeoutException;
import org.apache.hc.client5.http.HttpHostConnectException;
import org.apache.hc.core5.http.NoHttpResponseException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The retry decision table's rows for one send, each alone (docs/design.md, "Retry decision table"). */
class SendVerdictTest {

    @Test
    void aSendThatNeverLeftUsIsSentAgain() {
        assertThat(SendVerdict.ofSendFailure(new ConnectException("Connection refused")))
                .isEqualTo(SendVerdict.NOT_SENT);
        assertThat(SendVerdict.ofSendFailure(new HttpHostConnectException("Connect to 127.0.0.1:9 failed")))
                .isEqualTo(SendVerdict.NOT_SENT);
        assertThat(SendVerdict.ofSendFailure(new ConnectTimeoutException("connect timed out")))
                .isEqualTo(SendVerdict.NOT_SENT);
        assertThat(SendVerdict.ofSendFailure(new SSLHandshakeException("no cipher suites in common")))
                .isEqualTo(SendVerdict.NOT_SENT);
        assertThat(SendVerdict.ofSendFailure(new SSLPeerUnverifiedException("certificate does not match")))
                .isEqualTo(SendVerdict.NOT_SENT);
        assertThat(SendVerdict.ofSendFailure(new UnknownHostException("provider.invalid")))
                .isEqualTo(SendVerdict.NOT_SENT);
        assertThat(SendVerdict.NOT_SENT.sendAgain()).isTrue();
    }

    @Test
    void aSendThatLeftUsAndGotNoStatusIsUnknownAndNeverSentAgain() {
        assertThat(SendVerdict.ofSendFailure(new SocketTimeoutException("Read timed out")))
                .isEqualTo(SendVerdict.SENT_UNKNOWN);
        assertThat(SendVerdict.ofSendFailure(new NoHttpResponseException("127.0.0.1:443 failed to respond")))
                .isEqualTo(SendVerdict.SENT_UNKNOWN);
        assertThat(SendVerdict.ofSendFailure(new IOException("Connection reset")))
                .isEqualTo(SendVerdict.SENT_UNKNOWN);
        assertThat(SendVerdict.SENT_UNKNOWN.sendAgain()).isFalse();
    }

    @Test
    void twoHundredIsAnAnswerWhateverElseIsKnown() {
        assertThat(SendVerdict.ofStatus(200, true)).isEqualTo(SendVerdict.ANSWERING);
        assertThat(SendVerdict.ofStatus(200, false)).isEqualTo(SendVerdict.ANSWERING);
    }

    @ParameterizedTest
    @ValueSource(ints = {429, 500, 502, 503, 504, 529})
    void aReadable429Or5xxSaysTheProviderDidNotTakeItAndIsSentAgain(int status) {
        assertThat(SendVerdict.ofStatus(status, true)).isEqualTo(SendVerdict.DECLINED);
        assertThat(SendVerdict.DECLINED.sendAgain()).isTrue();
    }

    @ParameterizedTest
    @ValueSource(ints = {400, 401, 403, 404, 409, 413, 422})
    void anyOtherReadableErrorStatusFailsTheAttempt(int status) {
        assertThat(SendVerdict.ofStatus(status, true)).isEqualTo(SendVerdict.REFUSED);
        assertThat(SendVerdict.REFUSED.sendAgain()).isFalse();
    }

    @ParameterizedTest
    @ValueSource(ints = {400, 429, 500, 529})
    void anErrorStatusWhoseBodyStallsIsUnknownEvenWhenItsStatusWouldBeRetried(int status) {
        assertThat(SendVerdict.ofStatus(status, false)).isEqualTo(SendVerdict.SENT_UNKNOWN);
    }
}
