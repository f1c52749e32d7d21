package dev.jobapi.common.testing;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.methods;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaMethod;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import dev.jobapi.common.health.BackgroundLoops;
import io.quarkus.scheduler.Scheduled;

/**
 * The layering every module keeps, as ArchUnit rules its {@code ArchitectureTest} applies to its own
 * production classes: no package cycle below the module's root, no arrow into the other service or
 * into the fake provider. One definition, so the three modules cannot drift apart.
 */
public final class ArchitectureRules {

    /** The root package of each module whose classes the rules talk about. */
    public static final String COMMON = "dev.jobapi.common";

    public static final String API = "dev.jobapi.api";
    public static final String WORKER = "dev.jobapi.worker";
    public static final String FAKE_PROVIDER = "dev.jobapi.fakeprovider";

    private ArchitectureRules() {}

    /**
     * No cycle between the packages right below {@code root} ({@code dev.jobapi.api.rest},
     * {@code dev.jobapi.api.service}, ...), each taken with its subpackages.
     */
    public static ArchRule noPackageCyclesBelow(String root) {
        return slices().matching(root + ".(*)..")
                .namingSlices("package " + root + ".$1")
                .should()
                .beFreeOfCycles()
                .because("a package cycle means neither side can be read, tested or moved without the other");
    }

    /** Nothing imported depends on a class of the other service. */
    public static ArchRule noDependencyOnService(String otherService) {
        return noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAPackage(otherService + "..")
                .because("the services share only common and the database; each deploys and scales on its own");
    }

    /** Nothing imported depends on a class of either service. */
    public static ArchRule noDependencyOnEitherService() {
        return noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAnyPackage(API + "..", WORKER + "..")
                .because("common sits below both services: it must build and mean the same without them");
    }

    /** Nothing imported depends on the fake provider. */
    public static ArchRule noDependencyOnTheFakeProvider() {
        return noClasses()
                .should()
                .dependOnClassesThat()
                .resideInAPackage(FAKE_PROVIDER + "..")
                .because("the fake provider is a test double: only tests, local runs and the chaos suite use it");
    }

    /**
     * Every {@code @Scheduled} loop skips a round while its last one still runs and starts none once
     * shutdown began ({@link BackgroundLoops} is the skip predicate).
     */
    public static ArchRule scheduledLoopsSkipOverlapsAndShutdown() {
        return methods()
                .that()
                .areAnnotatedWith(Scheduled.class)
                .should(
                        new ArchCondition<JavaMethod>(
                                "declare concurrentExecution = SKIP and skipExecutionIf = BackgroundLoops.class") {
                            @Override
                            public void check(JavaMethod method, ConditionEvents events) {
                                Scheduled scheduled = method.getAnnotationOfType(Scheduled.class);
                                boolean declared = scheduled.concurrentExecution() == Scheduled.ConcurrentExecution.SKIP
                                        && scheduled.skipExecutionIf() == BackgroundLoops.class;
                                events.add(new SimpleConditionEvent(
                                        method,
                                        declared,
                                        method.getFullName() + (declared ? " skips" : " does not skip")
                                                + " overlapping rounds and rounds after shutdown"));
                            }
                        })
                .allowEmptyShould(true)
                .because("two rounds of one loop at once, or a round against a stopping application, is a"
                        + " race nobody designed for");
    }
}
