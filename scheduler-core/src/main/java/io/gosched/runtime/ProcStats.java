package io.gosched.runtime;

/**
 * One P as {@code GODEBUG=scheddetail} shows it. Ids are -1 where there is none.
 *
 * @param status idle, running, syscall, gcstop or dead
 */
public record ProcStats(int id, String status, long schedtick, long syscalltick, int runqueue,
                        long runnextGoid, long currentGoid, int mId, int timers) {
}
