/* devices.h - device lists (--devices 0-7, 0,2,5) for the worker pools; is a CUDA device usable? */
#ifndef LEAP_DEVICES_H
#define LEAP_DEVICES_H

#include <stddef.h>

/* The largest device index accepted (as --device). */
#define LEAP_DEVICE_MAX 1023

/* A parsed device list: devices in the order listed, and their names as strings. */
struct leap_devices {
	int n;
	int *idx;    /* idx[n]: device indices, distinct, each in [0, LEAP_DEVICE_MAX] */
	char **name; /* name[n]: the same as decimal strings (the runner's device argument) */
};

/* Parses `s`, a comma-separated list of device indices and ranges A-B (A <= B), e.g. "0-7"
 * or "0,2,5" or "0-3,6". Every number is checked with strtol and its end pointer. Returns 0
 * with *d filled (free it with leap_devices_free); -1 with a new message in *err when the list
 * is empty, malformed, out of range or names a device twice (*d is then left empty). */
int leap_devices_parse(const char *s, struct leap_devices *d, char **err);

/* Frees the list and empties it; an empty list is fine. */
void leap_devices_free(struct leap_devices *d);

/* 1 when a CUDA device is usable here, else 0 with the reason in why[0..n): some /dev/nvidia*
 * node exists, CUDA_VISIBLE_DEVICES does not hide every device, and a child process that
 * loads the driver (libcuda.so.1: cuInit, cuDeviceGetCount) counts at least one device. The
 * child keeps the driver out of the caller's process and is killed after 20 s. Used to pick
 * the backend when none is given (the cuda backend's `usable`, backend_cuda.c). */
int leap_cuda_usable(char *why, size_t n);

/* What to do about a cuda record that found no device (leap-verify's error message ends so). */
#define LEAP_NO_DEVICE_HINT "Run it where a CUDA device is usable, or prompt with --backend cpu."

#endif
