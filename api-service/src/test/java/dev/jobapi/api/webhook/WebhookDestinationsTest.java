package dev.jobapi.api.webhook;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.URI;
import org.junit.jupiter.api.Test;

/** Which addresses count as public, and the form a URL must have. */
class WebhookDestinationsTest {

    @Test
    void publicAddressesAreThoseOfNoReservedRange() throws Exception {
        for (String address : new String[] {"93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "2a00:1450::1"}) {
            assertThat(WebhookDestinations.isPublic(InetAddress.getByName(address)))
                    .as(address)
                    .isTrue();
        }
        for (String address : new String[] {
            "0.0.0.0",
            "10.0.0.1",
            "127.0.0.1",
            "100.64.0.1",
            "100.127.255.254",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.0.1",
            "192.0.0.8",
            "198.18.0.1",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:10.0.0.1",
            "2002:0a00:0001::1",
            "64:ff9b::7f00:1",
            "::127.0.0.1"
        }) {
            assertThat(WebhookDestinations.isPublic(InetAddress.getByName(address)))
                    .as(address)
                    .isFalse();
        }
    }

    @Test
    void aUrlMustBeAbsoluteHttpWithAHostAndNoUserInfoOrFragment() {
        WebhookDestinations destinations = new WebhookDestinations(false, true);
        assertThat(destinations.malformed("https://hooks.example.com/in")).isEmpty();
        for (String url : new String[] {
            null,
            "",
            "/relative",
            "ftp://example.com/",
            "https://user:pw@example.com/",
            "https://example.com/#x",
            "https:///nohost",
            "https://exa mple.com/",
            "https://example.com/" + "a".repeat(2048)
        }) {
            assertThat(destinations.malformed(url)).as(String.valueOf(url)).isPresent();
        }
        assertThat(destinations.refusal(URI.create("http://93.184.216.34/"))).isPresent();
        assertThat(new WebhookDestinations(true, false).refusal(URI.create("http://127.0.0.1/")))
                .isEmpty();
    }
}
