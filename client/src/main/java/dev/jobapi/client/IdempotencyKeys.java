package dev.jobapi.client;

/**
 * Where the client keeps the Idempotency-Key of each intention until the API has answered it. An
 * intention is one logical request (the same method, path and body); its key is minted once and used
 * for every retry, and for a later call with the same request while the first has no answer yet.
 * Once an answer decided the intention, the key is settled and the next identical request is a new
 * intention with a new key.
 */
public interface IdempotencyKeys {

    /** The pending key of this intention, minting and keeping a new one if there is none. */
    String keyFor(String intention);

    /** The API decided the intention: forget its key. */
    void settle(String intention);
}
