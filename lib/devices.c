/* devices.c - parse a device list (--devices 0-7, 0,2,5) for the per-device worker pools. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "devices.h"
#include "util.h"
#include "banned.h"

/* Reads one device index at *p (digits only: no sign, no blanks), advancing *p past it.
 * Returns the index, or -1 when there is none or it is above LEAP_DEVICE_MAX. */
static long number(const char **p)
{
	if (!isdigit((unsigned char)**p))
		return -1;
	char *end;
	errno = 0;
	long v = strtol(*p, &end, 10);
	if (errno || end == *p || v < 0 || v > LEAP_DEVICE_MAX)
		return -1;
	*p = end;
	return v;
}

int leap_devices_parse(const char *s, struct leap_devices *d, char **err)
{
	memset(d, 0, sizeof *d);
	unsigned char seen[LEAP_DEVICE_MAX + 1] = {0};
	size_t cap = 0;
	const char *p = s;
	if (!*p) {
		*err = xstrdup("the device list is empty");
		return -1;
	}
	for (;;) {
		long a = number(&p), b = a;
		if (a >= 0 && *p == '-') {
			p++;
			b = number(&p);
		}
		if (a < 0 || b < 0 || (*p && *p != ',')) {
			*err = xasprintf("'%s' is not a list of device indices in [0, %d] such as 0-7 or 0,2,5", s,
					 LEAP_DEVICE_MAX);
			goto fail;
		}
		if (b < a) {
			*err = xasprintf("'%s': the range %ld-%ld is backwards", s, a, b);
			goto fail;
		}
		for (long i = a; i <= b; i++) {
			if (seen[i]) {
				*err = xasprintf("'%s' names device %ld twice", s, i);
				goto fail;
			}
			seen[i] = 1;
			xgrow((void **)&d->idx, &cap, (size_t)d->n + 1, sizeof *d->idx);
			d->idx[d->n++] = (int)i;
		}
		if (!*p)
			break;
		p++; /* the comma: a list may not end with one */
	}
	d->name = xcalloc((size_t)d->n, sizeof *d->name);
	for (int i = 0; i < d->n; i++)
		d->name[i] = xasprintf("%d", d->idx[i]);
	return 0;
fail:
	free(d->idx);
	memset(d, 0, sizeof *d);
	return -1;
}

void leap_devices_free(struct leap_devices *d)
{
	for (int i = 0; i < d->n && d->name; i++)
		free(d->name[i]);
	free(d->name);
	free(d->idx);
	memset(d, 0, sizeof *d);
}
