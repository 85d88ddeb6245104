package io.gosched.handler;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.gosched.service.handler.JobHandlers;
import io.gosched.service.workload.JsonInput;
import io.gosched.service.workload.Task;
import jakarta.validation.Validator;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The application's {@link JobHandler} methods, found on its singleton beans once they all exist
 * (before the runtime starts taking jobs): a duplicate name or a signature a handler cannot have
 * stops the application's start with a message naming the methods. Thread-safe: the table is
 * written once, by the start-up thread, before any job is submitted, and read-only after.
 */
public final class JobHandlerRegistry implements JobHandlers, SmartInitializingSingleton {

    private final ConfigurableListableBeanFactory beans;
    private final JsonMapper json;
    private final Validator validator;
    /** By name; replaced once, at start-up. */
    private volatile Map<String, HandlerMethod> handlers = Map.of();

    JobHandlerRegistry(ConfigurableListableBeanFactory beans, JsonMapper json, Validator validator) {
        this.beans = beans;
        this.json = json;
        this.validator = validator;
    }

    @Override
    public void afterSingletonsInstantiated() {
        Map<String, HandlerMethod> found = new TreeMap<>();
        for (String beanName : beans.getBeanDefinitionNames()) {
            if (!beans.getBeanDefinition(beanName).isSingleton() || beans.getBeanDefinition(beanName).isAbstract()) {
                continue;
            }
            Class<?> type = beans.getType(beanName, false);
            if (type == null) {
                continue;
            }
            Class<?> user = ClassUtils.getUserClass(type);
            Map<Method, JobHandler> methods = MethodIntrospector.selectMethods(user,
                    (MethodIntrospector.MetadataLookup<JobHandler>) m -> AnnotatedElementUtils.findMergedAnnotation(m, JobHandler.class));
            if (methods.isEmpty()) {
                continue;
            }
            Object bean = beans.getBean(beanName);
            List<Method> ordered = new ArrayList<>(methods.keySet());
            ordered.sort(Comparator.comparing(Method::toString));
            for (Method m : ordered) {
                HandlerMethod h = HandlerMethod.of(beanName, bean, m, AopUtils.selectInvocableMethod(m, bean.getClass()), json, validator);
                HandlerMethod before = found.putIfAbsent(h.name, h);
                if (before != null) {
                    throw new IllegalStateException("Two @JobHandler methods are named '" + h.name + "': " + before.source + " and "
                            + h.source + "; a handler's name must be unique in the application");
                }
            }
        }
        handlers = Collections.unmodifiableMap(found);
    }

    @Override
    public Set<String> names() {
        return handlers.keySet();
    }

    @Override
    public Task parse(String name, JsonNode args, String pointer, JsonInput in) {
        HandlerMethod h = handlers.get(name);
        if (h == null) {
            in.violation("/handler", "unknown handler '" + name + "'"
                    + (handlers.isEmpty() ? ": this application has no job handlers" : " (handlers: " + String.join(", ", handlers.keySet()) + ")"));
            return null;
        }
        Object bound = h.bind(args, pointer, in);
        return bound == null ? null : new HandlerTask(h, bound == HandlerMethod.NO_ARGS ? null : bound, json);
    }

    /** The handlers, by name. */
    List<HandlerMethod> handlers() {
        return List.copyOf(handlers.values());
    }
}
