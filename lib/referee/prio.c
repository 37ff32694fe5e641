/* prio.c - the referee's scheduling priority while it times a record (the why: prio.h). */
/*
 * Linux schedules threads, not processes: sched_setscheduler and setpriority with 0 name the
 * calling thread, so a leap-bench timing on several devices raises each timing thread on its
 * own. SCHED_RESET_ON_FORK is part of the policy word: every child (fork, clone, a thread)
 * starts SCHED_OTHER at nice 0, whatever this thread runs at.
 */
#include <errno.h>
#include <sched.h>
#include <sys/resource.h>

#include "prio.h"
#include "core/banned.h"

#define RAISED_NICE (-10)

int leap_prio_raise(struct leap_prio *saved)
{
	struct sched_param sp = {0};
	saved->raised = LEAP_PRIO_NONE;
	saved->policy = sched_getscheduler(0);
	if (saved->policy < 0 || sched_getparam(0, &sp))
		return saved->policy = -1, LEAP_PRIO_NONE;
	saved->rt_priority = sp.sched_priority;
	errno = 0;
	saved->nice = getpriority(PRIO_PROCESS, 0);
	if (errno)
		return saved->policy = -1, LEAP_PRIO_NONE;
	struct sched_param fifo = {.sched_priority = sched_get_priority_min(SCHED_FIFO)};
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &fifo) == 0)
		return saved->raised = LEAP_PRIO_FIFO;
	struct sched_param other = {0};
	if (saved->nice > RAISED_NICE && sched_setscheduler(0, SCHED_OTHER | SCHED_RESET_ON_FORK, &other) == 0) {
		if (setpriority(PRIO_PROCESS, 0, RAISED_NICE) == 0)
			return saved->raised = LEAP_PRIO_NICE;
		struct sched_param back = {.sched_priority = saved->rt_priority};
		(void)sched_setscheduler(0, saved->policy, &back); /* as it was: nothing raised */
	}
	return LEAP_PRIO_NONE;
}

void leap_prio_restore(const struct leap_prio *saved)
{
	if (saved->policy < 0 || saved->raised == LEAP_PRIO_NONE)
		return;
	struct sched_param sp = {.sched_priority = saved->rt_priority};
	/* failures leave the thread raised: it only ever lowers itself here, which is allowed */
	(void)sched_setscheduler(0, saved->policy, &sp);
	(void)setpriority(PRIO_PROCESS, 0, saved->nice);
}

const char *leap_prio_name(int how)
{
	return how == LEAP_PRIO_FIFO ? "SCHED_FIFO" : how == LEAP_PRIO_NICE ? "nice -10" : "normal";
}
