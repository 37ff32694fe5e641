/* bench.c - time a verified candidate against its task's baseline: statistics, stopping rule, locks. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "build.h"
#include "jsonl.h"
#include "util.h"
#include "banned.h"

/* qsort comparison of doubles, ascending. */
static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void leap_stats(double *x, size_t n, struct leap_stats *s)
{
	memset(s, 0, sizeof *s);
	s->n = n;
	s->rel_ci = INFINITY;
	if (!n)
		return;
	qsort(x, n, sizeof *x, cmp_double);
	s->min = x[0];
	s->median = n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += x[i];
	s->mean = sum / (double)n;
	double ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - s->mean) * (x[i] - s->mean);
	s->stdev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	s->ci_lo = s->ci_hi = s->median;
	if (n < 6)
		return;
	double half = 1.959964 * sqrt((double)n) / 2;
	long lo = (long)floor((double)n / 2 - half), hi = (long)ceil((double)n / 2 + half); /* 1-based ranks */
	if (lo < 1)
		lo = 1;
	if (hi > (long)n)
		hi = (long)n;
	s->ci_lo = x[lo - 1];
	s->ci_hi = x[hi - 1];
	s->rel_ci = s->median > 0 ? (s->ci_hi - s->ci_lo) / 2 / s->median : INFINITY;
}

int leap_bench_done(const struct leap_stats *s, long min_runs, long max_runs, double target, double elapsed,
		    double max_time)
{
	if ((long)s->n >= max_runs)
		return 1;
	if ((long)s->n < min_runs)
		return 0;
	return elapsed >= max_time || s->rel_ci <= target;
}

void leap_bencher_init(struct leap_bencher *B, struct leap_verifier *v, const struct leap_bench_opts *o)
{
	memset(B, 0, sizeof *B);
	B->v = v;
	B->o = *o;
}

void leap_bencher_free(struct leap_bencher *B)
{
	free(B->bl);
	for (size_t i = 0; i < B->nbc; i++)
		leap_case_free(&B->bc[i].d);
	free(B->bc);
	memset(B, 0, sizeof *B);
}

/* The bench case of t for `seed`: inputs of every set and their reference results, computed
 * once per task and run. NULL with *err on failure. */
static struct leap_case_data *bench_case(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
					 uint64_t seed, char **err)
{
	for (size_t i = 0; i < B->nbc; i++)
		if (B->bc[i].task == t && B->bc[i].seed == seed)
			return &B->bc[i].d;
	leap_entry_fn ref = leap_reference(B->v, t, err);
	if (!ref)
		return NULL;
	struct leap_case_data d;
	uint32_t sets = (uint32_t)B->o.sets;
	if (leap_case_prepare(&d, t, leap_task_bench_case(t, b), 0, sets, sets, err))
		return NULL;
	for (uint32_t k = 0; k < sets; k++) {
		leap_case_inputs(&d, k, seed ^ 0xbe4c4u, k, NULL);
		int rc = leap_case_reference(&d, k, ref);
		if (rc) {
			*err = xasprintf("the reference of task '%s' returned %d on the benchmark case", t->id, rc);
			leap_case_free(&d);
			return NULL;
		}
	}
	xgrow((void **)&B->bc, &B->bccap, B->nbc + 1, sizeof *B->bc);
	B->bc[B->nbc] = (struct leap_bcase){t, seed, d};
	return &B->bc[B->nbc++].d;
}

/* Takes the exclusive lock of `device` under the cache, waiting for it and saying so the first
 * time this process waits (*said), not once per record. Returns the descriptor, or -1 with *err. */
static int lock_device(const char *cache, const char *device, int *said, char **err)
{
	char *dir = xasprintf("%s/locks", cache);
	char *path = xasprintf("%s/%s.lock", dir, device);
	int fd = -1;
	if (leap_mkdirs(dir) || (fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		*err = xasprintf("cannot open the device lock %s: %s", path, strerror(errno));
	} else if (flock(fd, LOCK_EX | LOCK_NB)) {
		if (!(*said)++)
			leap_warn("waiting for the lock on device %s (another leap-bench is timing on it)", device);
		while (flock(fd, LOCK_EX))
			if (errno != EINTR) {
				*err = xasprintf("cannot lock %s: %s", path, strerror(errno));
				close(fd);
				fd = -1;
				break;
			}
	}
	free(dir);
	free(path);
	return fd;
}

/* The device's copy bandwidth (GB/s) and FP32 peak (GFLOP/s, 0: unknown), measured once per
 * device name and backend in a runner holding the trusted baseline, cached in memory and
 * under CACHE/devices/. Returns 0, or -1 when the probe failed (no floor then). */
static int device_probe(struct leap_bencher *B, enum leap_backend b, const char *device, const char *base_art,
			uint64_t arena, double *gbs, double *gflops)
{
	if (B->probe_gbs > 0 && !strcmp(B->probe_device, device)) {
		*gbs = B->probe_gbs;
		*gflops = B->probe_gflops;
		return 0;
	}
	char hex[65];
	const char *parts[] = {"device-probe-v1", leap_backend_name(b), device};
	size_t lens[] = {strlen(parts[0]), strlen(parts[1]), strlen(device)};
	leap_sha256_hex(hex, parts, lens, 3);
	char *dir = xasprintf("%s/devices", B->v->o.cache), *path = xasprintf("%s/%s.json", dir, hex);
	json_t *j = json_load_file(path, 0, NULL);
	*gbs = leap_get_num(j, "copy_gbs", 0);
	*gflops = leap_get_num(j, "fp32_gflops", 0);
	json_decref(j);
	if (!(*gbs > 0)) {
		struct leap_session s;
		char *err = NULL;
		int r = leap_session_start(B->v, &s, b, base_art, arena, &err);
		if (r == LEAP_SESS_OK)
			r = leap_session_probe(&s, gbs, gflops);
		if (r >= 0)
			leap_session_end(&s, NULL, NULL, NULL, 0);
		free(err);
		if (r == LEAP_SESS_OK && *gbs > 0 && leap_mkdirs(dir) == 0) {
			json_t *o = json_pack("{s:s,s:s,s:f,s:f}", "device", device, "backend", leap_backend_name(b), "copy_gbs",
					      *gbs, "fp32_gflops", *gflops);
			char *tmp = xasprintf("%s.%d", path, (int)getpid());
			if (o && leap_json_write_file(o, tmp) == 0)
				rename(tmp, path);
			unlink(tmp);
			free(tmp);
			json_decref(o);
		}
		if (r != LEAP_SESS_OK)
			*gbs = *gflops = 0;
	}
	free(dir);
	free(path);
	if (!(*gbs > 0))
		return -1;
	B->probe_gbs = *gbs;
	B->probe_gflops = *gflops;
	snprintf(B->probe_device, sizeof B->probe_device, "%s", device);
	return 0;
}

/* The statistics as the bench object's fields (rel_ci -1 when not known). New reference. */
static json_t *stats_json(const struct leap_stats *s)
{
	return json_pack("{s:f,s:f,s:f,s:f,s:I,s:f}", "median_ms", s->median, "min_ms", s->min, "mean_ms", s->mean,
			 "stdev_ms", s->stdev, "n", (json_int_t)s->n, "rel_ci", isfinite(s->rel_ci) ? s->rel_ci : -1.0);
}

/* Looks a baseline up in memory, then on disk. */
static int baseline_get(struct leap_bencher *B, const char *key, struct leap_stats *st)
{
	for (size_t i = 0; i < B->nbl; i++)
		if (!strcmp(B->bl[i].key, key)) {
			*st = B->bl[i].st;
			return 1;
		}
	char *path = xasprintf("%s/baselines/%s.json", B->v->o.cache, key);
	json_t *j = json_load_file(path, 0, NULL);
	free(path);
	if (!j)
		return 0;
	memset(st, 0, sizeof *st);
	st->median = leap_get_num(j, "median_ms", 0);
	st->min = leap_get_num(j, "min_ms", 0);
	st->mean = leap_get_num(j, "mean_ms", 0);
	st->stdev = leap_get_num(j, "stdev_ms", 0);
	st->n = (size_t)leap_get_int(j, "n", 0);
	st->rel_ci = leap_get_num(j, "rel_ci", -1);
	if (st->rel_ci < 0)
		st->rel_ci = INFINITY;
	json_decref(j);
	if (!(st->median > 0) || st->n == 0)
		return 0;
	xgrow((void **)&B->bl, &B->blcap, B->nbl + 1, sizeof *B->bl);
	snprintf(B->bl[B->nbl].key, sizeof B->bl[B->nbl].key, "%s", key);
	B->bl[B->nbl++].st = *st;
	return 1;
}

/* Stores a measured baseline in memory and (atomically, best effort) on disk; `what` names
 * the task in the file. */
static void baseline_put(struct leap_bencher *B, const char *key, const struct leap_stats *st, const char *what)
{
	size_t i = 0;
	while (i < B->nbl && strcmp(B->bl[i].key, key))
		i++;
	if (i == B->nbl) {
		xgrow((void **)&B->bl, &B->blcap, B->nbl + 1, sizeof *B->bl);
		snprintf(B->bl[B->nbl].key, sizeof B->bl[B->nbl].key, "%s", key);
		B->nbl++;
	}
	B->bl[i].st = *st;
	char *dir = xasprintf("%s/baselines", B->v->o.cache), *path = xasprintf("%s/%s.json", dir, key);
	char *tmp = xasprintf("%s.%d", path, (int)getpid());
	json_t *o = stats_json(st);
	json_object_set_new(o, "of", json_string(what));
	if (leap_mkdirs(dir) == 0 && leap_json_write_file(o, tmp) == 0)
		rename(tmp, path);
	unlink(tmp);
	json_decref(o);
	free(tmp);
	free(path);
	free(dir);
}

/* Appends the ms and host ms of t[0..n) to the sample arrays. */
static void add_times(double **ms, double **host, size_t *len, size_t *cap, const struct leap_run_time *t, size_t n)
{
	size_t c = *cap;
	xgrow((void **)ms, &c, *len + n, sizeof **ms);
	c = *cap;
	xgrow((void **)host, &c, *len + n, sizeof **host);
	*cap = c;
	for (size_t i = 0; i < n; i++) {
		(*ms)[*len + i] = t[i].ms;
		(*host)[*len + i] = t[i].host_ms;
	}
	*len += n;
}

/* The baseline artifact of t on backend b: reference.c on cpu (built by bench_case),
 * baseline.cu on cuda (built and cached). Returns a new path, or NULL with *err set. */
static char *baseline_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, char **err)
{
	struct leap_verifier *v = B->v;
	char *base_art = NULL;
	if (b == LEAP_BACKEND_CUDA) {
		char *p = xasprintf("%s/baseline.cu", t->dir);
		size_t len;
		char *src = leap_read_file(p, &len, err);
		free(p);
		if (!src)
			return NULL;
		base_art = leap_build_artifact(t, b, src, len, v->o.cache, err);
		free(src);
	} else {
		for (size_t i = 0; i < v->nrefs; i++)
			if (v->refs[i].task == t)
				base_art = xstrdup(v->refs[i].path);
	}
	if (!base_art && !*err)
		*err = xasprintf("no baseline for task '%s'", t->id);
	return base_art;
}

int leap_bench_prepare(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b, uint64_t seed,
		       char **err)
{
	*err = NULL;
	if (!bench_case(B, t, b, seed, err))
		return -1;
	char *base_art = baseline_artifact(B, t, b, err);
	free(base_art);
	return base_art ? 0 : -1;
}

json_t *leap_bench_artifact(struct leap_bencher *B, const struct leap_task *t, enum leap_backend b,
			    const char *artifact, uint64_t seed, char **err)
{
	double t0 = leap_now();
	*err = NULL;
	struct leap_verifier *v = B->v;
	int cuda = b == LEAP_BACKEND_CUDA;
	struct leap_case_data *d = bench_case(B, t, b, seed, err);
	if (!d)
		return NULL;
	char *base_art = baseline_artifact(B, t, b, err);
	if (!base_art)
		return NULL;
	char lockname[32];
	snprintf(lockname, sizeof lockname, "%s%s", cuda ? "cuda" : "cpu", cuda ? v->o.device : "");
	int lock = lock_device(v->o.cache, lockname, &B->lock_said, err);
	if (lock < 0) {
		free(base_art);
		return NULL;
	}
	double tl = leap_now(); /* timing starts once the device is ours */
	struct leap_session cs, bs;
	memset(&bs, 0, sizeof bs);
	bs.shm_fd = -1;
	int have_bs = 0;
	json_t *out = NULL;
	const char *status = "ok";
	struct leap_buf msg = {0}, output = {0};
	char *why = NULL;
	int timeout = 0, failed = 0;
	double *cms = NULL, *chost = NULL, *bms = NULL, *bhost = NULL;
	size_t cn = 0, ccap = 0, bn = 0, bcap = 0;
	struct leap_stats cst, bst, hst;
	memset(&bst, 0, sizeof bst);
	int bcached = 0;
	char device[LEAP_RUN_MSG] = "";
	int r = leap_session_start(v, &cs, b, artifact, d->arena_bytes, err);
	if (r < 0)
		goto unlock;
	if (r != LEAP_SESS_OK) {
		failed = 1;
		goto end;
	}
	snprintf(device, sizeof device, "%s", cs.last.msg);
	for (uint32_t k = 0; k < d->arena_sets; k++)
		leap_case_upload(d, k, k, cs.arena);
	/* The baseline key: task, backend, device, baseline build, case and method. */
	char key[65];
	{
		char *sets = xasprintf("%s|%d|%d|%s", cuda ? v->o.device : "-", B->o.sets, B->o.hot, d->desc);
		const char *parts[] = {"baseline-v1", t->id, leap_backend_name(b), device, base_art, sets};
		size_t lens[6];
		for (int i = 0; i < 6; i++)
			lens[i] = strlen(parts[i]);
		leap_sha256_hex(key, parts, lens, 6);
		free(sets);
	}
	bcached = B->o.baseline_cache && baseline_get(B, key, &bst);
	{ /* the baseline runs even when cached: one block checks that the machine still agrees */
		r = leap_session_start(v, &bs, b, base_art, d->arena_bytes, err);
		if (r < 0) {
			leap_session_end(&cs, NULL, NULL, NULL, 0);
			goto unlock;
		}
		have_bs = 1;
		for (uint32_t k = 0; r == LEAP_SESS_OK && k < d->arena_sets; k++)
			leap_case_upload(d, k, k, bs.arena);
		if (r != LEAP_SESS_OK) {
			char *bwhy = NULL;
			leap_session_end(&bs, &bwhy, NULL, NULL, 0);
			have_bs = 0;
			*err = xasprintf("the baseline of task '%s' failed to start: %s", t->id, bwhy ? bwhy : bs.last.msg);
			free(bwhy);
			leap_session_end(&cs, NULL, NULL, NULL, 0);
			goto unlock;
		}
	}
	uint32_t flags = (cuda && !B->o.hot ? LEAP_RUN_F_FLUSH_L2 : 0) | (cuda ? 0 : LEAP_RUN_F_PIN);
	uint32_t sets = d->arena_sets;
	/* Warm-up: one call each, which also sizes the blocks. */
	struct leap_run_time w;
	r = leap_session_call(&cs, d, 0, 0, 1, flags, &w);
	if (r != LEAP_SESS_OK) {
		failed = 1;
		goto end;
	}
	double est = w.ms > 1e-4 ? w.ms : 1e-4;
	if (have_bs) {
		struct leap_run_time bw;
		if (leap_session_call(&bs, d, 0, 0, 1, flags, &bw) != LEAP_SESS_OK) {
			*err = xasprintf("the baseline of task '%s' failed during timing", t->id);
			goto end;
		}
	}
	long block = (long)ceil(B->o.block_ms / est);
	if (block < (long)sets)
		block = (long)sets;
	if (block > 1000)
		block = 1000;
	struct leap_run_time *tm = xcalloc((size_t)block, sizeof *tm);
	if (bcached) {
		/* Reuse the cached baseline only while a block of it still agrees with it, within
		 * baseline_tol plus twice its CI: load or clocks that changed since make it stale. */
		long nchk = block > B->o.min_runs ? block : B->o.min_runs;
		struct leap_run_time *ct = xcalloc((size_t)nchk, sizeof *ct);
		if (leap_session_call(&bs, d, 0, 0, (uint32_t)nchk, flags | LEAP_RUN_F_LAST_OUT, ct) != LEAP_SESS_OK) {
			free(ct);
			free(tm);
			*err = xasprintf("the baseline of task '%s' failed during timing", t->id);
			goto end;
		}
		add_times(&bms, &bhost, &bn, &bcap, ct, (size_t)nchk);
		free(ct);
		struct leap_stats chk;
		double *tmp = xmalloc(bn * sizeof *tmp);
		memcpy(tmp, bms, bn * sizeof *tmp);
		leap_stats(tmp, bn, &chk);
		free(tmp);
		double tol = B->o.baseline_tol + 2 * (isfinite(bst.rel_ci) ? bst.rel_ci : 0);
		if (fabs(chk.median - bst.median) <= tol * bst.median) {
			leap_session_end(&bs, NULL, NULL, NULL, 0);
			have_bs = 0;
		} else {
			bcached = 0; /* stale: time it again, interleaved, keeping this block */
		}
	}
	uint32_t next = 1 % sets;
	for (;;) {
		uint32_t first = next;
		r = leap_session_call(&cs, d, first, 0, (uint32_t)block, flags | LEAP_RUN_F_LAST_OUT, tm);
		if (r != LEAP_SESS_OK) {
			failed = 1;
			break;
		}
		next = (uint32_t)((first + (uint32_t)block) % sets);
		add_times(&cms, &chost, &cn, &ccap, tm, (size_t)block);
		/* Re-check the outputs of the timed calls: every slot this block wrote. */
		struct leap_errstats es = {0, 0};
		json_t *mm = NULL;
		char *m = NULL;
		for (uint32_t i = 0; i < sets && !mm; i++)
			mm = leap_case_check(d, i, i, cs.arena, 0, &es, &m);
		if (mm) {
			status = "suspicious";
			leap_buf_addf(&msg, "Wrong output on the timing inputs (benchmark case %s): %s", d->desc, m);
			free(m);
			json_decref(mm);
			break;
		}
		if (have_bs) {
			if (leap_session_call(&bs, d, first, 0, (uint32_t)block, flags | LEAP_RUN_F_LAST_OUT, tm) != LEAP_SESS_OK) {
				free(tm);
				*err = xasprintf("the baseline of task '%s' failed during timing", t->id);
				goto end;
			}
			add_times(&bms, &bhost, &bn, &bcap, tm, (size_t)block);
		}
		double *tmp = xmalloc(cn * sizeof *tmp);
		memcpy(tmp, cms, cn * sizeof *tmp);
		leap_stats(tmp, cn, &cst);
		free(tmp);
		struct leap_stats bcheck = bst;
		if (have_bs) {
			tmp = xmalloc(bn * sizeof *tmp);
			memcpy(tmp, bms, bn * sizeof *tmp);
			leap_stats(tmp, bn, &bcheck);
			free(tmp);
		}
		double el = leap_now() - tl;
		if (leap_bench_done(&cst, B->o.min_runs, B->o.max_runs, B->o.target_ci, el, B->o.max_time) &&
		    (!have_bs || leap_bench_done(&bcheck, B->o.min_runs, B->o.max_runs, B->o.target_ci, el, B->o.max_time)))
			break;
	}
	free(tm);
end:
	leap_session_end(&cs, &why, &timeout, &output, 2048);
	if (have_bs)
		leap_session_end(&bs, NULL, NULL, NULL, 0);
	if (!*err && (cs.sb.setup_error[0] || (have_bs && bs.sb.setup_error[0])))
		*err = xasprintf("the sandbox could not start the runner: %s",
				 cs.sb.setup_error[0] ? cs.sb.setup_error : bs.sb.setup_error);
	if (*err)
		goto unlock;
	if (failed) {
		if (r == LEAP_SESS_REPLY && cs.last.status == LEAP_RUN_NO_DEVICE) {
			status = "no_device";
			leap_buf_addf(&msg, "Not timed: %s.", cs.last.msg);
		} else if (r == LEAP_SESS_REPLY) {
			status = "runtime_error";
			leap_buf_addf(&msg, "Runtime error while timing: %s.", cs.last.msg);
		} else {
			status = timeout ? "timeout" : "runtime_error";
			leap_buf_addf(&msg, "Your code %s while being timed (benchmark case %s).", why ? why : "died", d->desc);
		}
		out = json_pack("{s:s,s:s}", "status", status, "message", msg.s);
		goto unlock;
	}
	leap_stats(cms, cn, &cst);
	leap_stats(chost, cn, &hst);
	if (have_bs) {
		leap_stats(bms, bn, &bst);
		if (B->o.baseline_cache)
			baseline_put(B, key, &bst, t->id);
	}
	out = stats_json(&cst);
	json_object_set_new(out, "host_median_ms", json_real(hst.median));
	json_object_set_new(out, "baseline_ms", json_real(bst.median));
	json_object_set_new(out, "baseline_rel_ci", json_real(isfinite(bst.rel_ci) ? bst.rel_ci : -1.0));
	json_object_set_new(out, "baseline_n", json_integer((json_int_t)bst.n));
	json_object_set_new(out, "baseline_cached", json_boolean(bcached));
	json_object_set_new(out, "speedup", json_real(cst.median > 0 ? bst.median / cst.median : 0));
	json_object_set_new(out, "device", json_string(device));
	json_object_set_new(out, "case", leap_case_json(t, leap_task_bench_case(t, b)));
	if (!strcmp(status, "ok")) {
		if (cuda && hst.median > 1.5 * cst.median + 0.02) {
			status = "suspicious";
			leap_buf_addf(&msg, "The host saw %.3g ms per call but the GPU events only %.3g ms: work escapes the "
					    "timed stream (a side stream or deferred work?).",
				      hst.median, cst.median);
		}
		const struct leap_case *bc = leap_task_bench_case(t, b);
		int64_t bytes = 0, flops = 0;
		int hb = leap_task_eval(t, t->bytes, bc, &bytes) == 0 && bytes > 0;
		int hf = leap_task_eval(t, t->flops, bc, &flops) == 0 && flops > 0;
		double gbs, gflops;
		if ((hb || hf) && device_probe(B, b, device, base_art, d->arena_bytes, &gbs, &gflops) == 0) {
			double bytes_ms = hb ? (double)bytes / (gbs * 1e9) * 1e3 : 0;
			double flops_ms = hf && gflops > 0 ? (double)flops / (gflops * 1e9) * 1e3 : 0;
			double floor_ms = bytes_ms > flops_ms ? bytes_ms : flops_ms;
			if (floor_ms > 0) {
				json_object_set_new(out, "floor_ms", json_real(floor_ms));
				json_object_set_new(out, "roofline", json_real(floor_ms / cst.median));
			}
			/* Only memory traffic is a hard floor (tensor cores beat the FP32 rate); on cpu
			 * caches can hold a benchmark case, hence the wider margin. */
			double margin = cuda ? 0.5 : 0.25;
			if (!strcmp(status, "ok") && bytes_ms > 0 && cst.median < margin * bytes_ms) {
				status = "suspicious";
				leap_buf_addf(&msg, "%.3g ms per call is below %g of the memory floor (%.3g ms to move %lld bytes at "
						    "%.0f GB/s): the kernel cannot be doing the work.",
					      cst.median, margin, bytes_ms, (long long)bytes, gbs);
			}
		}
	}
	if (strcmp(status, "ok"))
		json_object_set_new(out, "speedup", json_real(0)); /* no reward for a suspicious time */
	if (!strcmp(status, "ok"))
		leap_buf_addf(&msg, "Median %.4g ms over %zu calls (+-%.2g%%), baseline %.4g ms: speedup %.3gx.", cst.median,
			      cst.n, 100 * (isfinite(cst.rel_ci) ? cst.rel_ci : 1), bst.median,
			      cst.median > 0 ? bst.median / cst.median : 0);
	json_object_set_new(out, "status", json_string(status));
	json_object_set_new(out, "message", json_string(msg.s ? msg.s : ""));
unlock:
	if (out) {
		json_object_set_new(out, "seed", json_integer((json_int_t)seed));
		json_object_set_new(out, "ms", json_real((leap_now() - t0) * 1e3));
		if (output.len)
			json_object_set_new(out, "output", json_string(output.s));
	}
	close(lock);
	free(base_art);
	free(why);
	free(cms);
	free(chost);
	free(bms);
	free(bhost);
	leap_buf_free(&msg);
	leap_buf_free(&output);
	return out;
}
