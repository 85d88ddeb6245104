package io.gosched.service.error;

/** There is no such thing: a job or a channel of that id or name. */
public final class NotFoundException extends ServiceException {

    private final String what;
    private final String id;

    /**
     * {@code what 'id' does not exist}, with the member {@code what} (spaces as underscores) naming
     * the id.
     *
     * @param what  "job", "channel"
     */
    public NotFoundException(String what, String id) {
        super(what + " '" + id + "' does not exist");
        this.what = what;
        this.id = id;
        with(what.replace(' ', '_'), id);
    }

    public String what() {
        return what;
    }

    public String id() {
        return id;
    }
}
