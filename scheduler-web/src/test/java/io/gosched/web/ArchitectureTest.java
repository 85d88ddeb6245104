package io.gosched.web;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The layers of the project, read from the compiled main classes of every module (this module's
 * test class path holds them all): the runtime at the bottom, then the service's domain, then
 * the HTTP API and cluster mode beside each other, then the application. No class imports one
 * of a layer above its own, and the domain and cluster mode use no web framework. Maven's module
 * graph keeps a module from naming a module it does not depend on; this test keeps packages
 * inside a module in order too, and fails naming each import that breaks a rule.
 */
class ArchitectureTest {

    static JavaClasses classes;

    @BeforeAll
    static void load() {
        // In a reactor build past "package" the other modules come as jars, in an IDE or a plain
        // "test" as class folders: both are read. Test classes are left out, as folders
        // (DO_NOT_INCLUDE_TESTS) and as test-jars (the fixtures other modules' tests share).
        classes = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .withImportOption(location -> !location.contains("-tests.jar"))
                .importPackages("io.gosched");
    }

    private static final String[] RUNTIME = {"io.gosched.runtime..", "io.gosched.sync..", "io.gosched.context..",
            "io.gosched.time..", "io.gosched.net.."};
    private static final String[] WEB_FRAMEWORK = {"org.springframework.web..", "org.springframework.http..",
            "org.springframework.security..", "reactor.netty..", "io.netty..", "org.springdoc..",
            "io.swagger.v3.oas.models.."};

    private static void check(ArchRule rule) {
        rule.check(classes);
    }

    @Test
    void theRuntimeKnowsNothingOfTheService() {
        check(noClasses().that().resideInAnyPackage(RUNTIME).should().dependOnClassesThat()
                .resideInAnyPackage("io.gosched.service..", "io.gosched.api..", "io.gosched.cluster..", "io.gosched.web..")
                .because("the runtime is a library of its own: the service is built on it, never the other way"));
    }

    @Test
    void theServiceDomainUsesNoWebFrameworkAndNoLayerAboveIt() {
        check(noClasses().that().resideInAPackage("io.gosched.service..").should().dependOnClassesThat()
                .resideInAnyPackage("io.gosched.api..", "io.gosched.cluster..", "io.gosched.web..")
                .because("scheduler-service is the domain: the API and cluster mode are built on it"));
        check(noClasses().that().resideInAPackage("io.gosched.service..").should().dependOnClassesThat()
                .resideInAnyPackage(WEB_FRAMEWORK)
                .because("the domain is Spring-free of HTTP: requests and problems are the API's"));
    }

    @Test
    void clusterModeUsesTheDomainNotTheApi() {
        check(noClasses().that().resideInAPackage("io.gosched.cluster..").should().dependOnClassesThat()
                .resideInAnyPackage("io.gosched.api..", "io.gosched.web..")
                .because("cluster mode contributes the domain's ports (queue, store, nodes, channel homes)"));
        check(noClasses().that().resideInAPackage("io.gosched.cluster..").should().dependOnClassesThat()
                .resideInAnyPackage(WEB_FRAMEWORK)
                .because("cluster mode speaks NATS, not HTTP"));
    }

    @Test
    void theApiDoesNotReachIntoClusterModeOrTheApplication() {
        check(noClasses().that().resideInAPackage("io.gosched.api..").should().dependOnClassesThat()
                .resideInAnyPackage("io.gosched.cluster..", "io.gosched.web..")
                .because("the API serves whichever ports the beans provide, embedded or cluster"));
    }

    @Test
    void portsDependOnNoImplementationOfThem() {
        check(noClasses().that().resideInAnyPackage("io.gosched.service.job.spi..", "io.gosched.service.channel.spi..")
                .should().dependOnClassesThat()
                .resideInAnyPackage("io.gosched.service.job.memory..", "io.gosched.service.config..", "io.gosched.cluster..")
                .because("a port says what the domain needs; its implementations depend on it"));
        check(noClasses().that().resideInAPackage("io.gosched.service.error..").should().dependOnClassesThat()
                .resideInAnyPackage("io.gosched.service.job..", "io.gosched.service.channel..", "io.gosched.service.workload..",
                        "io.gosched.service.budget..")
                .because("the error family is the bottom of the domain: every part throws it"));
    }

    @Test
    void noPackageCycles() {
        check(slices().matching("io.gosched.service.(**)").should().beFreeOfCycles());
        check(slices().matching("io.gosched.api.(**)").should().beFreeOfCycles());
        check(slices().matching("io.gosched.cluster.(**)").should().beFreeOfCycles());
    }
}
