package dev.jobapi.api.contract;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a test that sends requests the OpenAPI document forbids on purpose (hostile bodies, wrong
 * media types, forged signatures): {@link ContractValidation} then checks its responses only.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface OutsideTheContract {
    /** Why the requests leave the document. */
    String value();
}
