package dev.jobapi.api.rest;

import io.netty.util.NetUtil;
import io.vertx.core.http.HttpServerRequest;
import java.util.List;

/**
 * Who the client of a request is, for the per-client bound on bodies in flight. The peer address,
 * unless the deployment names the proxies it trusts ({@code jobapi.intake.trusted-proxies}): then,
 * for a request that comes from one of them, the right-most address of {@code X-Forwarded-For} that
 * is not a trusted proxy. Anyone can send the header, so it is never read from an untrusted peer,
 * and an entry that is not an IP address ends the walk (the nearest trusted hop is the client).
 */
final class ClientAddresses {

    private static final String FORWARDED_FOR = "X-Forwarded-For";

    /** An address range: the address's bytes and how many leading bits must match. */
    private record Range(byte[] network, int bits) {
        boolean contains(byte[] address) {
            if (address.length != network.length) {
                return false;
            }
            int whole = bits / 8;
            for (int i = 0; i < whole; i++) {
                if (address[i] != network[i]) {
                    return false;
                }
            }
            int rest = bits % 8;
            if (rest == 0) {
                return true;
            }
            int mask = 0xff << (8 - rest);
            return (address[whole] & mask) == (network[whole] & mask);
        }
    }

    private final List<Range> trusted;

    /** @param trustedProxies addresses and CIDR ranges; a setting that is neither stops the start. */
    ClientAddresses(List<String> trustedProxies) {
        this.trusted = trustedProxies.stream().map(ClientAddresses::range).toList();
    }

    private static Range range(String setting) {
        String[] parts = setting.trim().split("/", 2);
        byte[] network = NetUtil.createByteArrayFromIpAddressString(parts[0]);
        if (network == null) {
            throw new IllegalArgumentException(
                    "jobapi.intake.trusted-proxies: '" + setting + "' is not an IP address or CIDR range");
        }
        int bits = network.length * 8;
        if (parts.length == 2) {
            try {
                bits = Integer.parseInt(parts[1]);
            } catch (NumberFormatException e) {
                bits = -1;
            }
            if (bits < 0 || bits > network.length * 8) {
                throw new IllegalArgumentException(
                        "jobapi.intake.trusted-proxies: '" + setting + "' has no valid prefix length");
            }
        }
        return new Range(network, bits);
    }

    /** The client's address as text; {@code unknown} when the connection has none. */
    String of(HttpServerRequest request) {
        String peer =
                request.remoteAddress() == null ? null : request.remoteAddress().hostAddress();
        if (peer == null) {
            return "unknown";
        }
        if (trusted.isEmpty() || !isTrusted(peer)) {
            return peer;
        }
        String client = peer;
        List<String> forwarded = request.headers().getAll(FORWARDED_FOR);
        for (int h = forwarded.size() - 1; h >= 0; h--) {
            String[] hops = forwarded.get(h).split(",");
            for (int i = hops.length - 1; i >= 0; i--) {
                String hop = hops[i].trim();
                byte[] address = NetUtil.createByteArrayFromIpAddressString(hop);
                if (address == null) {
                    return client; // not an address: the hop that wrote it is the last one we can name
                }
                client = NetUtil.bytesToIpAddress(address);
                if (!contains(address)) {
                    return client;
                }
            }
        }
        return client;
    }

    private boolean isTrusted(String address) {
        byte[] bytes = NetUtil.createByteArrayFromIpAddressString(address);
        return bytes != null && contains(bytes);
    }

    private boolean contains(byte[] address) {
        return trusted.stream().anyMatch(range -> range.contains(address));
    }
}
