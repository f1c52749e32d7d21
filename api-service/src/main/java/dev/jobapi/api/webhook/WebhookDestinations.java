package dev.jobapi.api.webhook;

import dev.jobapi.api.config.JobApiConfig;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Optional;

/**
 * Where a webhook may be sent. An endpoint's URL is chosen by a caller, and the api sends from inside
 * the cluster, so by default a destination must be public: not loopback, link-local (cloud metadata
 * at 169.254.169.254), private, shared (100.64/10), unique-local or otherwise reserved, by every
 * address its name resolves to. Checked at registration and again before every try, since a name can
 * resolve elsewhere later; a name that changes between the check and the connection (DNS rebinding)
 * is what the deployment's egress policy covers (docs/design.md "Push: webhooks").
 */
@ApplicationScoped
public class WebhookDestinations {

    /** The longest URL an endpoint may have. */
    static final int MAX_URL_LENGTH = 2048;

    private final boolean allowPrivate;
    private final boolean requireHttps;

    @Inject
    WebhookDestinations(JobApiConfig config) {
        this(config.webhooks().allowPrivateDestinations(), config.webhooks().requireHttps());
    }

    WebhookDestinations(boolean allowPrivate, boolean requireHttps) {
        this.allowPrivate = allowPrivate;
        this.requireHttps = requireHttps;
    }

    /** What is wrong with the URL's form (not absolute http(s), user info, a fragment, too long), if anything. */
    Optional<String> malformed(String url) {
        if (url == null || url.isBlank()) {
            return Optional.of("url is required");
        }
        if (url.length() > MAX_URL_LENGTH) {
            return Optional.of("url is longer than " + MAX_URL_LENGTH + " characters");
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (java.net.URISyntaxException e) {
            return Optional.of("url is not a URI: " + e.getReason());
        }
        if (!"http".equals(uri.getScheme()) && !"https".equals(uri.getScheme())) {
            return Optional.of("url must be an absolute http or https URL");
        }
        if (uri.getHost() == null || uri.getRawUserInfo() != null || uri.getRawFragment() != null) {
            return Optional.of("url must name a host, and carry no user info and no fragment");
        }
        return Optional.empty();
    }

    /** Why a well-formed URL may not be sent to now, if it may not. */
    Optional<String> refusal(URI url) {
        if (requireHttps && !"https".equals(url.getScheme())) {
            return Optional.of("only https destinations are accepted");
        }
        if (allowPrivate) {
            return Optional.empty();
        }
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(url.getHost());
        } catch (UnknownHostException e) {
            return Optional.of("the host " + url.getHost() + " does not resolve");
        }
        for (InetAddress address : addresses) {
            if (!isPublic(address)) {
                return Optional.of("the host " + url.getHost() + " resolves to " + address.getHostAddress()
                        + ", not a public address");
            }
        }
        return Optional.empty();
    }

    static boolean isPublic(InetAddress address) {
        if (address.isAnyLocalAddress()
                || address.isLoopbackAddress()
                || address.isLinkLocalAddress()
                || address.isSiteLocalAddress()
                || address.isMulticastAddress()) {
            return false;
        }
        byte[] bytes = address.getAddress();
        if (address instanceof Inet4Address) {
            return isPublicIpv4(bytes);
        }
        int first = bytes[0] & 0xff;
        int second = bytes[1] & 0xff;
        if ((first & 0xfe) == 0xfc) {
            return false; // fc00::/7, unique local
        }
        if (first == 0x20 && second == 0x01 && (bytes[2] & 0xff) == 0x0d && (bytes[3] & 0xff) == 0xb8) {
            return false; // 2001:db8::/32, documentation
        }
        if (first == 0x20 && second == 0x02) {
            return isPublicIpv4(new byte[] {bytes[2], bytes[3], bytes[4], bytes[5]}); // 2002::/16, 6to4
        }
        if (first == 0 && second == 0x64 && (bytes[2] & 0xff) == 0xff && (bytes[3] & 0xff) == 0x9b) {
            return isPublicIpv4(new byte[] {bytes[12], bytes[13], bytes[14], bytes[15]}); // 64:ff9b::/96, NAT64
        }
        boolean leadingZeros = true;
        for (int i = 0; i < 12; i++) {
            leadingZeros &= bytes[i] == 0;
        }
        // ::/96 (IPv4-compatible, deprecated) and what is left of ::/8.
        return !leadingZeros && first != 0;
    }

    private static boolean isPublicIpv4(byte[] bytes) {
        int first = bytes[0] & 0xff;
        int second = bytes[1] & 0xff;
        return first != 0 // this network
                && first != 10
                && first != 127
                && !(first == 100 && (second & 0xc0) == 64) // shared address space (carrier NAT)
                && !(first == 169 && second == 254)
                && !(first == 172 && (second & 0xf0) == 16)
                && !(first == 192 && second == 168)
                && !(first == 192 && second == 0 && (bytes[2] & 0xff) == 0) // IETF protocol assignments
                && !(first == 198 && (second & 0xfe) == 18) // benchmarking
                && first < 224; // multicast, reserved, broadcast
    }
}
