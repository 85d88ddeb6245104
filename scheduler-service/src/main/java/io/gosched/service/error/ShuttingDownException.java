package io.gosched.service.error;

/** This node is shutting down and takes no new work; another node, or this one restarted, will. */
public final class ShuttingDownException extends ServiceException {

    public ShuttingDownException() {
        super("the service is shutting down and accepts no new work");
    }
}
