/* par.c - work shared by a few threads (par.h).
 *
 * The referee copies and compares hundreds of megabytes between its timed blocks (a block's
 * sets made in its slots, every call's outputs checked), while nothing is timed and the cores
 * it times on are idle: on two cores, two threads halve it. Threads are started per use and
 * joined before it returns, so nothing outlives the call (no pool to end before a fork). They
 * start at the normal priority: the referee's real-time one is not passed on to new threads
 * (SCHED_RESET_ON_FORK, prio.h), so a busy machine may delay a helper; the caller meanwhile
 * takes whatever pieces are left, and waits only for those a helper holds. A thread costs
 * tens of microseconds; callers start them only for megabytes. */
#include <pthread.h>

#include "par.h"
#include "core/banned.h"

void leap_par_run(unsigned threads, void *(*worker)(void *), void *arg)
{
	pthread_t th[LEAP_PAR_MAX];
	unsigned started = 0;
	while (started + 1 < threads && started + 1 < LEAP_PAR_MAX && pthread_create(&th[started], NULL, worker, arg) == 0)
		started++;
	worker(arg); /* and what any thread that could not start would have done */
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}
