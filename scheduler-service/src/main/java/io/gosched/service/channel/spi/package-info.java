/**
 * Where named channels live when there is more than one node, and how an operation on another
 * node's channel reaches it. A node alone has no other: its defaults
 * ({@code io.gosched.service.channel.SoleNodeChannels}) know only its own channels.
 *
 * <p>A channel lives on one node, its home: the real {@code Chan} exists only there, so Go's
 * semantics (rendezvous, FIFO waiters, close waking everyone) stay exact. The
 * {@link io.gosched.service.channel.spi.ChannelDirectory} records homes cluster-wide; the
 * {@link io.gosched.service.channel.spi.ChannelForwarder} carries send, recv and close from any
 * node to the home, which runs them on its {@link io.gosched.service.channel.spi.LocalChannels}
 * (the home's {@code ChannelRegistry}) with the caller's timeout and the same withdrawal rule as
 * {@code ChannelService} ({@code future.cancel(false)} decides, atomically). The exactly-once
 * rules of the one-node {@code ChannelService} hold across nodes:
 * <ul>
 * <li>a send answered {@code sent:false} was withdrawn at the home and is never delivered; a send
 *     whose outcome cannot be learned (the home died) is answered as lost, never as not sent;</li>
 * <li>a value taken by a forwarded recv is handed to exactly one caller: a retried request (its
 *     reply was lost) gets the same outcome from the home's outcome cache, and a value whose
 *     caller went away, or never confirmed it, is put back into the channel;</li>
 * <li>when the home is gone, every operation ends with
 *     {@link io.gosched.service.error.GoneException} (the channel is lost), never a hang.</li>
 * </ul>
 * An HTTP select whose channels all live on one other node is forwarded there as one select
 * ({@link io.gosched.service.channel.spi.LocalSelect} on the home); one over several homes runs
 * as rounds of non-blocking attempts ({@code ChannelSelect}).
 * A blocking select over channels with different homes cannot be made atomic by forwarding; the
 * job service refuses it (an invalid request) and runs a job whose shared channels share a home on that home
 * ({@link io.gosched.service.job.spi.JobTicket#node()}).
 */
package io.gosched.service.channel.spi;
