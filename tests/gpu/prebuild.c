/* prebuild.c - builds the trusted artifacts of tasks into a cache: each task's reference (cpu)
 * and baseline.cu (cuda), exactly as leap-verify and leap-bench build them on first use
 * (lib/task/build.c), so that a GPU machine given that cache builds neither (make gpu-prepare). */
/*
 * Why: leap-verify builds a task's reference and leap-bench its cuda baseline when a record of
 * the task first needs them, with cc and nvcc. The machine that gets a GPU for a few minutes
 * may have no compiler that matches (or none), and its minutes are for measuring: check-gpu
 * builds them on the machine that prepares the run, into the cache it carries. The artifacts
 * are found there by their key (compiler as named, flags, prelude, shim, source), so the
 * machine that runs them must name nvcc as this one did (check-gpu.sh exports it).
 *
 * usage: prebuild CACHE TASK_DIR...   One line per artifact, "TASK reference|baseline PATH";
 * exit status 1 when one does not build (its message on stderr), 2 on usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "task/build.h"
#include "core/files.h"
#include "task/task.h"
#include "core/util.h"
#include "core/banned.h"

/* Builds TASK_DIR/NAME for backend b into the cache; prints its line. 0 or -1. */
static int build_one(const struct leap_task *t, const char *cache, enum leap_backend b)
{
	const char *name = b == LEAP_BACKEND_CUDA ? "baseline.cu" : "reference.c";
	char *path = xasprintf("%s/%s", t->dir, name), *err = NULL, *art = NULL;
	size_t len = 0;
	char *src = leap_read_file(path, &len, &err);
	if (src)
		art = leap_build_artifact(t, b, src, len, cache, &err);
	if (art)
		printf("%s %s %s\n", t->id, b == LEAP_BACKEND_CUDA ? "baseline" : "reference", art);
	else
		fprintf(stderr, "%s: %s: %s\n", leap_prog(), path, err ? err : "does not build");
	free(src);
	free(err);
	free(path);
	int ok = art != NULL;
	free(art);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: %s CACHE TASK_DIR...\n", leap_prog());
		return LEAP_EXIT_FATAL;
	}
	int rc = LEAP_EXIT_OK;
	for (int i = 2; i < argc; i++) {
		char *err = NULL;
		struct leap_task *t = leap_task_load(argv[i], &err);
		if (!t) {
			fprintf(stderr, "%s: %s\n", leap_prog(), err);
			free(err);
			rc = LEAP_EXIT_RECORDS;
			continue;
		}
		if (build_one(t, argv[1], LEAP_BACKEND_CPU) || build_one(t, argv[1], LEAP_BACKEND_CUDA))
			rc = LEAP_EXIT_RECORDS;
		leap_task_free(t);
	}
	return rc;
}
