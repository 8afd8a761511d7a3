package dev.heureka.spring.push;

import com.netflix.appinfo.ApplicationInfoManager;
import com.netflix.appinfo.InstanceInfo;
import com.netflix.discovery.EurekaClientConfig;
import com.netflix.discovery.endpoint.EndpointUtils;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.cache.Cache;
import org.springframework.cloud.client.ConditionalOnDiscoveryEnabled;
import org.springframework.cloud.client.discovery.event.HeartbeatEvent;
import org.springframework.cloud.configuration.TlsProperties;
import org.springframework.cloud.loadbalancer.cache.LoadBalancerCacheManager;
import org.springframework.cloud.loadbalancer.core.CachingServiceInstanceListSupplier;
import org.springframework.cloud.netflix.eureka.EurekaClientAutoConfiguration;
import org.springframework.cloud.netflix.eureka.EurekaDiscoveryClient;
import org.springframework.cloud.netflix.eureka.reactive.EurekaReactiveDiscoveryClient;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * Makes an application's Spring Cloud {@code DiscoveryClient} and LoadBalancer follow Heureka's
 * push stream ({@code {serviceUrl}push}), with no configuration: active wherever the Eureka
 * client is enabled and fetches the registry; {@code heureka.push.enabled=false} turns it off.
 */
@AutoConfiguration(after = EurekaClientAutoConfiguration.class)
@ConditionalOnClass({EurekaClientConfig.class, EurekaDiscoveryClient.class, CloseableHttpClient.class})
@ConditionalOnDiscoveryEnabled
@ConditionalOnProperty(value = "eureka.client.enabled", matchIfMissing = true)
@ConditionalOnProperty(value = "eureka.client.fetch-registry", matchIfMissing = true)
@ConditionalOnProperty(value = "heureka.push.enabled", matchIfMissing = true)
public class HeurekaPushAutoConfiguration {

    private static final Log log = LogFactory.getLog(HeurekaPushAutoConfiguration.class);

    @Bean
    public PushView heurekaPushView(Environment environment) {
        // As EurekaDiscoveryClient answers: only UP instances unless the application says otherwise.
        boolean filterOnlyUp = Binder.get(environment)
                .bind("eureka.client.filter-only-up-instances", Boolean.class)
                .orElse(true);
        return new PushView(filterOnlyUp);
    }

    @Bean
    public static BeanPostProcessor heurekaPushDiscoveryClientWrapper(ObjectProvider<PushView> view) {
        return new DiscoveryClientWrapper(view);
    }

    @Bean
    public HeurekaPushLifecycle heurekaPushLifecycle(
            PushView view,
            ObjectProvider<EurekaClientConfig> clientConfig,
            ObjectProvider<ApplicationInfoManager> infoManager,
            ObjectProvider<TlsProperties> tls,
            ApplicationEventPublisher events) {
        AtomicLong changes = new AtomicLong();
        // As CloudEurekaClient after a fetch: Gateway's discovery routes and other
        // HeartbeatEvent listeners refresh. The value differs from any the Eureka client sends.
        view.addListener(index -> events.publishEvent(
                new HeartbeatEvent(view, "heureka-push-" + changes.incrementAndGet())));
        return new HeurekaPushLifecycle(view, clientConfig, infoManager, tls);
    }

    /**
     * Clears Spring Cloud LoadBalancer's instance cache after each change the push applied.
     *
     * <p>The cache managers are looked up by type in the bean factory, not injected: Spring Cloud
     * LoadBalancer 5.0 declares its {@code defaultLoadBalancerCacheManager} with
     * {@code autowireCandidate = false} (so that it never becomes the application's CacheManager),
     * and an injected {@code ObjectProvider<LoadBalancerCacheManager>} finds nothing.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(LoadBalancerCacheManager.class)
    static class LoadBalancerCacheEviction {

        LoadBalancerCacheEviction(PushView view, ListableBeanFactory beans) {
            Executor later = CompletableFuture.delayedExecutor(250, TimeUnit.MILLISECONDS);
            view.addListener(index -> {
                clear(beans);
                // A lookup that read the view just before this change may store its list just
                // after the clear: clear once more when any such lookup has long finished.
                later.execute(() -> {
                    if (view.live() == index) {
                        clear(beans);
                    }
                });
            });
        }

        private static void clear(ListableBeanFactory beans) {
            Map<String, LoadBalancerCacheManager> managers;
            try {
                managers = beans.getBeansOfType(LoadBalancerCacheManager.class, false, false);
            } catch (BeansException e) {
                // The context is closing.
                return;
            }
            for (LoadBalancerCacheManager manager : managers.values()) {
                Cache cache = manager.getCache(CachingServiceInstanceListSupplier.SERVICE_INSTANCE_CACHE_NAME);
                if (cache != null) {
                    cache.clear();
                }
            }
        }
    }

    /** Replaces the Eureka DiscoveryClient beans with subclasses that consult the push view. */
    static final class DiscoveryClientWrapper implements BeanPostProcessor {

        private static final boolean REACTIVE = isPresent(
                "org.springframework.cloud.netflix.eureka.reactive.EurekaReactiveDiscoveryClient")
                && isPresent("reactor.core.publisher.Flux");

        private final ObjectProvider<PushView> view;

        DiscoveryClientWrapper(ObjectProvider<PushView> view) {
            this.view = view;
        }

        @Override
        public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
            if (bean instanceof EurekaDiscoveryClient client
                    && !(bean instanceof PushEurekaDiscoveryClient)) {
                return new PushEurekaDiscoveryClient(client, view.getObject());
            }
            if (REACTIVE) {
                return Reactive.wrap(bean, view);
            }
            return bean;
        }

        private static boolean isPresent(String name) {
            try {
                Class.forName(name, false, DiscoveryClientWrapper.class.getClassLoader());
                return true;
            } catch (ClassNotFoundException | LinkageError e) {
                return false;
            }
        }
    }

    /** Kept apart so that reactor's classes are loaded only when they are there. */
    static final class Reactive {
        static Object wrap(Object bean, ObjectProvider<PushView> view) {
            if (bean instanceof EurekaReactiveDiscoveryClient client
                    && !(bean instanceof PushEurekaReactiveDiscoveryClient)) {
                return new PushEurekaReactiveDiscoveryClient(client, view.getObject());
            }
            return bean;
        }
    }

    /** Starts the stream's thread with the context and stops it with the context. */
    public static final class HeurekaPushLifecycle implements SmartLifecycle {

        private final PushView view;
        private final ObjectProvider<EurekaClientConfig> clientConfig;
        private final ObjectProvider<ApplicationInfoManager> infoManager;
        private final ObjectProvider<TlsProperties> tls;
        private PushClient client;

        HeurekaPushLifecycle(
                PushView view,
                ObjectProvider<EurekaClientConfig> clientConfig,
                ObjectProvider<ApplicationInfoManager> infoManager,
                ObjectProvider<TlsProperties> tls) {
            this.view = view;
            this.clientConfig = clientConfig;
            this.infoManager = infoManager;
            this.tls = tls;
        }

        @Override
        public synchronized void start() {
            if (client != null) {
                return;
            }
            EurekaClientConfig config = clientConfig.getIfAvailable();
            if (config == null) {
                log.info("Heureka push not in use: no EurekaClientConfig bean");
                return;
            }
            PushHttp http;
            try {
                http = new PushHttp(tls.getIfAvailable(), config.getEurekaServerConnectTimeoutSeconds());
            } catch (Exception e) {
                log.warn("Heureka push not in use: cannot set up its HTTP client (eureka.client.tls.*): " + e);
                return;
            }
            client = new PushClient(view, () -> serviceUrls(config), http);
            client.start();
        }

        /** The Eureka client's service URLs, those of this instance's zone first. */
        private List<String> serviceUrls(EurekaClientConfig config) {
            String[] zones = config.getAvailabilityZones(config.getRegion());
            String zone;
            ApplicationInfoManager manager = infoManager.getIfAvailable();
            InstanceInfo me = manager == null ? null : manager.getInfo();
            if (me != null) {
                zone = InstanceInfo.getZone(zones, me);
            } else {
                zone = zones != null && zones.length > 0 ? zones[0] : "defaultZone";
            }
            if (config.shouldUseDnsForFetchingServiceUrls() && me != null) {
                // eureka.client.use-dns-for-fetching-service-urls: the DNS TXT records, as the
                // Eureka client reads them.
                return EndpointUtils.getDiscoveryServiceUrls(
                        config, zone, new EndpointUtils.InstanceInfoBasedUrlRandomizer(me));
            }
            return EndpointUtils.getServiceUrlsFromConfig(config, zone, config.shouldPreferSameZoneEureka());
        }

        @Override
        public synchronized void stop() {
            if (client != null) {
                client.close();
                client = null;
            }
        }

        @Override
        public synchronized boolean isRunning() {
            return client != null;
        }
    }
}
