/* prio.h - the referee's scheduling priority while it times a record. */
#ifndef LEAP_PRIO_H
#define LEAP_PRIO_H

/*
 * A timed block runs from leap-bench's thaw to its freeze, and leap-bench itself is in that
 * window twice: it must wake to send "go" and again to see "done" and freeze. On a machine
 * busy with other work (a CI runner, `make check` beside), each wake-up can wait milliseconds
 * for a CPU, and that wait lands in the candidate's time (or the baseline's) at random: on the
 * 2-core VM beside two busy loops it was 0 to 7 ms of a 20 ms block. Waiting is not the
 * candidate's work, and it is not something the candidate can cause to be left out: so the
 * referee does not subtract it, it avoids it, by taking the CPU first. While a record is timed,
 * the timing thread runs SCHED_FIFO at the lowest real-time priority where it may (root, or
 * CAP_SYS_NICE; the kernel's real-time throttling still bounds it), else at nice -10, else as
 * it was. SCHED_RESET_ON_FORK in both: the runners, their compilers and any thread it starts
 * get the ordinary policy at nice 0, so the candidate never inherits the referee's priority.
 * The thread sleeps (poll, nanosleep) whenever a block runs, so it takes no time from it.
 */

/* The thread's scheduling before leap_prio_raise. */
struct leap_prio {
	int policy;      /* sched_getscheduler's, SCHED_RESET_ON_FORK included; -1: nothing saved */
	int rt_priority;
	int nice;
	int raised;      /* enum leap_prio_how */
};

enum leap_prio_how { LEAP_PRIO_NONE = 0, LEAP_PRIO_NICE, LEAP_PRIO_FIFO };

/* Raises the calling thread's priority as far as this process may (above), saving the old one in
 * *saved. Returns how (enum leap_prio_how). */
int leap_prio_raise(struct leap_prio *saved);

/* Gives the calling thread back the scheduling saved by leap_prio_raise. */
void leap_prio_restore(const struct leap_prio *saved);

/* "SCHED_FIFO", "nice -10" or "normal" (static). */
const char *leap_prio_name(int how);

#endif
