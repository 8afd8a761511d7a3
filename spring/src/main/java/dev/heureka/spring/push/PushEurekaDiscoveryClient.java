package dev.heureka.spring.push;

import java.util.List;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.netflix.eureka.EurekaDiscoveryClient;

/**
 * Spring Cloud Netflix's blocking {@link EurekaDiscoveryClient}, answering from the push view while
 * it is live and from the original bean otherwise. It extends the original's class (beans of
 * Spring Cloud Netflix are injected by that type) and overrides every method, so the Eureka client
 * it was built with is never used: all calls go to the view or the delegate.
 */
public class PushEurekaDiscoveryClient extends EurekaDiscoveryClient {

    private final EurekaDiscoveryClient delegate;
    private final PushView view;

    public PushEurekaDiscoveryClient(EurekaDiscoveryClient delegate, PushView view) {
        super(null, null);
        this.delegate = delegate;
        this.view = view;
    }

    /** The bean this one wraps. */
    public EurekaDiscoveryClient getDelegate() {
        return delegate;
    }

    @Override
    public String description() {
        return delegate.description();
    }

    @Override
    public List<ServiceInstance> getInstances(String serviceId) {
        PushView.Index index = view.live();
        if (index == null) {
            return delegate.getInstances(serviceId);
        }
        // Live: the view's answer, empty when the application has no UP instance (the delegate's
        // list may still hold what the push already removed).
        return List.copyOf(index.instances(serviceId));
    }

    @Override
    public List<String> getServices() {
        PushView.Index index = view.live();
        return index == null ? delegate.getServices() : List.copyOf(index.services());
    }

    @Override
    public void probe() {
        delegate.probe();
    }

    @Override
    public int getOrder() {
        return delegate.getOrder();
    }
}
