package dev.heureka.spring.push;

import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.netflix.eureka.reactive.EurekaReactiveDiscoveryClient;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Spring Cloud Netflix's {@link EurekaReactiveDiscoveryClient}, answering from the push view while
 * it is live (decided when the Flux is subscribed) and from the original bean otherwise. Like
 * {@link PushEurekaDiscoveryClient} it extends the original's class and overrides every method.
 */
public class PushEurekaReactiveDiscoveryClient extends EurekaReactiveDiscoveryClient {

    private final EurekaReactiveDiscoveryClient delegate;
    private final PushView view;

    public PushEurekaReactiveDiscoveryClient(EurekaReactiveDiscoveryClient delegate, PushView view) {
        super(null, null);
        this.delegate = delegate;
        this.view = view;
    }

    /** The bean this one wraps. */
    public EurekaReactiveDiscoveryClient getDelegate() {
        return delegate;
    }

    @Override
    public String description() {
        return delegate.description();
    }

    @Override
    public Flux<ServiceInstance> getInstances(String serviceId) {
        return Flux.defer(() -> {
            PushView.Index index = view.live();
            return index == null
                    ? delegate.getInstances(serviceId)
                    : Flux.fromIterable(index.instances(serviceId));
        });
    }

    @Override
    public Flux<String> getServices() {
        return Flux.defer(() -> {
            PushView.Index index = view.live();
            return index == null ? delegate.getServices() : Flux.fromIterable(index.services());
        });
    }

    @Override
    public void probe() {
        delegate.probe();
    }

    @Override
    public Mono<Void> reactiveProbe() {
        return delegate.reactiveProbe();
    }

    @Override
    public int getOrder() {
        return delegate.getOrder();
    }
}
