/* torchref.c - the reference of a module task: its PyTorch module, run by torch in a process
 * leap starts and keeps per task. */
/*
 * A module task (task.json "module", leap-task(5) MODULE TASKS) has no reference.c: the module
 * file is the reference, computed by torch in float64. torch is a Python library, so the
 * reference is a process of its own: `$LEAP_TORCH_PYTHON libexec/leap-torchref.py serve DIR`,
 * started through child.c the first time a verifier needs the task's outputs and kept until
 * the verifier ends, since importing torch takes seconds and a case takes milliseconds. It is
 * trusted code in a process of leap's, like reference.c called in leap's own: a candidate
 * never runs in it, and only leap's drawn values reach it (inputs, parameters and buffers
 * alike), so its outputs are leap's to compare.
 *
 * The protocol, one request at a time: the buffers in shared memory, the lines on a pair of
 * pipes. The shared memory is a memfd of leap's, made at the start (close-on-exec) and placed
 * at the process's descriptor 3 by child.c, which closes every descriptor a child is not given:
 * no runner, compiler or other child of leap holds it (torch-tasks.bats "a module task's
 * candidate holds no descriptor of the torch reference's shared memory"). leap grows it to what
 * a request needs (never shrinks it: the process's map of it stays valid), writes each input
 * buffer at its offset (each buffer, inputs and outputs in parameter order, 64-byte aligned) and
 * fills the outputs' place with 0xff bytes, then sends a JSON line {"values": {scalar: v},
 * "counts": [elements of each buffer], "offsets": [byte offset of each], "bytes": the region's
 * size}. The process reads the inputs in place (torch.frombuffer: no copy), writes each output
 * at its offset, having checked its element count, and answers a line {"ok": true, "forward_s":
 * the forward's own seconds}, or {"error": why}; only then does leap read the outputs. Through
 * the pipe, ResNet18's 48 MB state cost a write, a read and two copies a case (bench/torchref.md).
 * Each answer has a deadline (LEAP_TORCHREF_TIMEOUT_S): a module that hangs is the task's fault,
 * said as an error, never a verdict; the process is ended then and never asked again, since its
 * late answer would come amid the next request's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/child.h"
#include "core/fdio.h"
#include "core/jsonl.h"
#include "torchref.h"
#include "core/util.h"
#include "core/banned.h"

/* The longest a start (importing torch on a loaded machine) or one answer may take. */
#define LEAP_TORCHREF_TIMEOUT_S 300.0
/* Where a buffer starts in the shared memory: a multiple of this, as torch's own allocations. */
#define LEAP_TORCHREF_ALIGN 64
/* The shared memory's descriptor in the process (runner/torchref.py reads it there). */
#define LEAP_TORCHREF_SHM_FD 3

extern char **environ;

struct leap_torchref {
	struct leap_child ch;
	int to, from; /* our ends: requests, answers */
	int shm;      /* the shared memory (a memfd), mapped at map for cap bytes */
	unsigned char *map;
	size_t cap;
	pid_t owner;  /* the process that started it: a forked worker's copy never ends it */
	double forward_s; /* the last answer's forward, as torch timed it */
	int gone;     /* it missed an answer: ended, never asked again */
	char *id;
};

const char *leap_torch_python(char **err)
{
	const char *p = getenv("LEAP_TORCH_PYTHON");
	if (p && *p)
		return p;
	*err = xstrdup("module tasks need torch: set LEAP_TORCH_PYTHON to a Python that imports torch");
	return NULL;
}

char *leap_torchref_script(const char *libexec, char **err)
{
	if (!libexec) {
		*err = xstrdup("cannot find libexec (set LEAP_LIBEXEC): leap-torchref.py lives there");
		return NULL;
	}
	char *s = xasprintf("%s/leap-torchref.py", libexec);
	if (access(s, R_OK)) {
		*err = xasprintf("%s: %s", s, strerror(errno));
		free(s);
		return NULL;
	}
	return s;
}

/* Waits for fd until the deadline in *arg (leap_now's clock). */
static int wait_deadline(void *arg, int fd, short events)
{
	double left = *(const double *)arg - leap_now();
	if (left <= 0)
		return 1;
	struct pollfd p = {.fd = fd, .events = events};
	int r = poll(&p, 1, (int)(left * 1e3) + 1);
	return r < 0 && errno != EINTR ? -1 : 0;
}

struct leap_torchref *leap_torchref_start(const struct leap_task *t, const char *libexec, char **err)
{
	const char *py = leap_torch_python(err);
	if (!py)
		return NULL;
	char *script = leap_torchref_script(libexec, err);
	if (!script)
		return NULL;
	int req[2] = {-1, -1}, ans[2] = {-1, -1}, shm = -1; /* pipe2 leaves them as they are on failure */
	const char *what = NULL;
	if (pipe2(req, O_CLOEXEC) || pipe2(ans, O_CLOEXEC))
		what = "pipe";
	else if ((shm = memfd_create("leap-torchref", MFD_CLOEXEC)) < 0)
		what = "memfd_create";
	if (what) {
		*err = xasprintf("%s: %s", what, strerror(errno));
		int fds[] = {req[0], req[1], ans[0], ans[1]};
		for (size_t i = 0; i < 4; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		free(script);
		return NULL;
	}
	struct leap_torchref *r = xcalloc(1, sizeof *r);
	char *argv[] = {(char *)py, script, "serve", t->dir, NULL};
	leap_child_init(&r->ch);
	r->ch.argv = argv;
	r->ch.env = environ;
	r->ch.exec_what = "cannot start the torch reference ($LEAP_TORCH_PYTHON)";
	r->ch.fd[0] = req[0];
	r->ch.fd[1] = ans[1];
	r->ch.fd[2] = STDERR_FILENO; /* torch's own warnings and a traceback reach the user */
	r->ch.fd[LEAP_TORCHREF_SHM_FD] = shm; /* its copy is the only one past execve */
	r->ch.nfd = LEAP_TORCHREF_SHM_FD + 1;
	r->ch.fail_slot = 2;
	r->ch.fail_prefix = "leap torchref: ";
	r->ch.report_slot = -1;
	leap_child_limit(&r->ch, RLIMIT_DATA, LEAP_TORCH_DATA_BYTES, LEAP_TORCH_DATA_BYTES);
	int rc = leap_child_start(&r->ch);
	int e = errno;
	close(req[0]);
	close(ans[1]);
	free(script);
	r->to = req[1];
	r->from = ans[0];
	r->shm = shm;
	r->id = xstrdup(t->id);
	r->owner = getpid();
	if (rc) {
		*err = xasprintf("cannot start the torch reference of task '%s': %s", t->id, strerror(e));
		leap_torchref_stop(r);
		return NULL;
	}
	return r;
}

/* Reads the answer's line (at most 64 KiB) before the deadline. A new string, or NULL. */
static char *read_line(int fd, double *deadline)
{
	struct leap_buf b = {0};
	char c;
	while (b.len < 65536) {
		if (leap_fd_move(fd, 0, &c, 1, wait_deadline, deadline)) {
			leap_buf_free(&b);
			return NULL;
		}
		if (c == '\n')
			return b.s ? leap_buf_detach(&b) : xstrdup("");
		leap_buf_addf(&b, "%c", c);
	}
	leap_buf_free(&b);
	return NULL;
}

/* Where each buffer of d lies in the shared memory (64-byte aligned, in parameter order; 0 for
 * a scalar) into at[]; returns the bytes they take. */
static size_t layout(const struct leap_case_data *d, size_t *at)
{
	size_t end = 0;
	for (size_t i = 0; i < d->t->nparams; i++) {
		at[i] = 0;
		if (d->rp[i].kind == LEAP_RUN_K_SCALAR)
			continue;
		at[i] = end;
		end += ((size_t)d->rp[i].bytes + LEAP_TORCHREF_ALIGN - 1) / LEAP_TORCHREF_ALIGN * LEAP_TORCHREF_ALIGN;
	}
	return end;
}

/* Grows the shared memory to `need` bytes at least. Returns 0, or -1 with a new message. */
static int grow(struct leap_torchref *r, size_t need, char **err)
{
	if (need <= r->cap && r->map)
		return 0;
	size_t page = (size_t)sysconf(_SC_PAGESIZE), cap = need > r->cap * 2 ? need : r->cap * 2;
	cap = (cap ? cap : 1) + page - 1;
	cap -= cap % page;
	if (ftruncate(r->shm, (off_t)cap)) {
		*err = xasprintf("cannot grow the torch reference's shared memory to %zu bytes: %s", cap, strerror(errno));
		return -1;
	}
	if (r->map)
		munmap(r->map, r->cap);
	r->map = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_SHARED, r->shm, 0);
	if (r->map == MAP_FAILED) {
		r->map = NULL;
		r->cap = 0;
		*err = xasprintf("cannot map the torch reference's shared memory: %s", strerror(errno));
		return -1;
	}
	r->cap = cap;
	return 0;
}

/* The request's line: the case's scalars (int sizes, floats), every buffer's element count and
 * offset, and the bytes they take. */
static char *request_line(const struct leap_case_data *d, const size_t *at, size_t bytes)
{
	const struct leap_task *t = d->t;
	json_t *vals = json_object(), *counts = json_array(), *offs = json_array();
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role == LEAP_ROLE_SCALAR) /* a float: one the forward takes, A * s */
			json_object_set_new(vals, p->name, leap_type_is_float(p->type) ? json_real(d->c->vals[i].f)
										  : json_integer(d->c->vals[i].i));
		else {
			json_array_append_new(counts, json_integer(d->sizes[i]));
			json_array_append_new(offs, json_integer((json_int_t)at[i]));
		}
	}
	json_t *o = json_pack("{s:o,s:o,s:o,s:I}", "values", vals, "counts", counts, "offsets", offs, "bytes",
			      (json_int_t)bytes);
	char *s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

/* Puts the inputs of set `set` in the shared memory and the outputs' place in 0xff bytes, then
 * sends the line. Returns 0, or -1 (the process is gone). */
static int send_request(struct leap_torchref *r, const struct leap_case_data *d, uint32_t set, const size_t *at,
			size_t bytes, double *deadline)
{
	size_t np = d->t->nparams;
	for (size_t i = 0; i < np; i++) {
		const struct leap_run_param *p = &d->rp[i];
		if (p->kind == LEAP_RUN_K_IN) /* an import makes no inout: outputs are new tensors */
			memcpy(r->map + at[i], d->inputs[(size_t)set * np + i], (size_t)p->bytes);
		else if (p->kind == LEAP_RUN_K_OUT || p->kind == LEAP_RUN_K_INOUT)
			memset(r->map + at[i], 0xff, (size_t)p->bytes); /* what an unwritten output reads as */
	}
	char *line = request_line(d, at, bytes);
	if (!line)
		return -1;
	size_t n = strlen(line);
	line[n] = '\n'; /* in the NUL's place: the line goes out without one */
	int rc = leap_fd_move(r->to, 1, line, n + 1, wait_deadline, deadline);
	free(line);
	return rc ? -1 : 0;
}

int leap_torchref_case(struct leap_torchref *r, struct leap_case_data *d, uint32_t set, char **err)
{
	double deadline = leap_now() + LEAP_TORCHREF_TIMEOUT_S;
	size_t np = d->t->nparams;
	if (r->gone) {
		*err = xasprintf("the torch reference of task '%s' failed an earlier case: not asked on %s", r->id,
				 d->desc);
		return -1;
	}
	size_t *at = xcalloc(np ? np : 1, sizeof *at), bytes = layout(d, at);
	char *line = NULL;
	json_t *a = NULL;
	int rc = -1;
	if (grow(r, bytes, err))
		goto out;
	if (send_request(r, d, set, at, bytes, &deadline) || !(line = read_line(r->from, &deadline))) {
		*err = xasprintf("the torch reference of task '%s' %s on %s", r->id,
				 leap_now() >= deadline ? "did not answer in time" : "ended", d->desc);
		/* a late answer would land in the shared memory and on the pipe amid the next request's */
		if (r->ch.pid > 0 && r->owner == getpid())
			leap_child_kill(r->ch.pid);
		r->gone = 1;
		goto out;
	}
	a = json_loads(line, 0, NULL);
	if (!json_is_true(json_object_get(a, "ok"))) {
		const char *why = json_string_value(json_object_get(a, "error"));
		*err = xasprintf("the torch reference of task '%s' fails on %s: %s", r->id, d->desc,
				 why ? why : "an answer it should not give");
		goto out;
	}
	r->forward_s = json_real_value(json_object_get(a, "forward_s"));
	/* the process wrote every output, each checked to be whole, before it answered */
	for (size_t i = 0; i < np; i++)
		if (d->rp[i].kind == LEAP_RUN_K_OUT || d->rp[i].kind == LEAP_RUN_K_INOUT)
			memcpy(d->want[(size_t)set * np + i], r->map + at[i], (size_t)d->rp[i].bytes);
	rc = 0;
out:
	json_decref(a);
	free(line);
	free(at);
	return rc;
}

double leap_torchref_forward_s(const struct leap_torchref *r)
{
	return r->forward_s;
}

void leap_torchref_stop(struct leap_torchref *r)
{
	if (!r)
		return;
	if (r->to >= 0)
		close(r->to); /* its stdin ends: it exits */
	if (r->from >= 0)
		close(r->from);
	if (r->map)
		munmap(r->map, r->cap);
	if (r->shm >= 0)
		close(r->shm);
	if (r->ch.pid > 0 && r->owner == getpid())
		leap_child_finish(&r->ch, 5.0);
	free(r->id);
	free(r);
}
