/* filter.h - the runner's system-call filter (seccomp), installed before candidate code loads. */
#ifndef LEAP_RUNNER_FILTER_H
#define LEAP_RUNNER_FILTER_H

#include <stddef.h>

/* Installs the filter for this process and every thread and child it makes from now on, and
 * a SIGSYS handler that names a denied call to the parent before the runner dies of it.
 * Returns 0, or -1 with why in msg (n bytes). */
int filter_install(char *msg, size_t n);

#endif
