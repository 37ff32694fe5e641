/* fault.c - the runner's crash report: where the candidate's code faulted, for the feedback.
 *
 * A fault in the candidate kills the runner, and the parent reads the verdict from the wait
 * status, as before. Just before, a handler on its own stack (a stack overflow leaves no room
 * on the usual one) sends one more reply: LEAP_RUN_CRASH, the signal in `code`, in `msg`
 * the address as an offset into the artifact ("0x1f2a"), and in `call` 0 when that is the
 * faulting instruction itself, 1 when the fault lies in a function the candidate's code
 * called (memcpy, abort from assert) and the offset is that call's, 2 when neither was found.
 * The parent maps the offset to a source line (lib/sandbox/crash.c). When the faulting instruction
 * is not the artifact's, `msg` goes on with a space and the file name of the object that
 * holds it ("0x1f2a libc.so.6", "- libc.so.6" for call 2; "?" when no object does): a
 * fault in malloc after a heap overrun must not read as a crash without a place. The
 * objects are listed once, before any fault, so the handler takes no loader lock. A SIGSEGV
 * or SIGBUS whose data address lies in the shared regions ends `msg` with " @0xOFF", that
 * address as an offset of the regions' layout (runproto.h): the parent names the buffer
 * whose guard page it hit, and how far past its end or before its start.
 *
 * The candidate shares this process and may forge the reply or replace the handlers: the
 * parent believes it only when the runner then died of that very signal, and even then uses
 * it for nothing but naming a line in the message, never for a verdict. Everything here runs
 * before the candidate's first call or inside the handler, where only async-signal-safe
 * calls are made (backtrace() is warmed up before, so that it does not load libgcc_s then).
 *
 * Security: what this layer stops and what it does not, each claim with the test that shows it
 * (SECURITY.md gives the layer one row and names this file; tests are named as in
 * tests/FILE.bats, with their file where it is not the one named before).
 *
 * The crash report:
 *
 * One reply is the candidate's to forge by design: the crash report (`LEAP_RUN_CRASH`,
 * runner/fault.c), which a signal handler in the runner sends just before a fault kills it, so
 * that the feedback can name the faulting line. The parent uses it only to name a line in
 * `verify.message` and `verify.crash`, and only when the runner then died of the very signal it
 * reported (it waits up to 2 s for that death); the verdict comes from the wait status, as
 * without the report. Test: "cpu: a forged crash report from a runner that did not crash names
 * no line" (tests/feedback.bats, forged_crash.c).
 */
#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "fault.h"
#include "sandbox/runproto.h"
#include "core/banned.h"

#define ALT_STACK (256 << 10)

/* The artifact's mapping: its load base and the addresses its segments span. */
static uintptr_t art_base, art_lo, art_hi;

/* The objects loaded when the artifact was (the runner, libc, libm, libgomp...): the span of
 * each and its file's base name. */
#define MAX_OBJS 64
static struct obj {
	uintptr_t lo, hi;
	char name[48];
} objs[MAX_OBJS];
static int nobjs;

/* dl_iterate_phdr callback: notes one object's span and name. */
static int note_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (nobjs == MAX_OBJS)
		return 1;
	struct obj *o = &objs[nobjs];
	o->lo = UINTPTR_MAX;
	o->hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
		o->lo = lo < o->lo ? lo : o->lo;
		o->hi = hi > o->hi ? hi : o->hi;
	}
	const char *path = info->dlpi_name, *slash = path ? strrchr(path, '/') : NULL;
	const char *base = slash ? slash + 1 : path;
	if (!base || !*base)
		base = "leap-run"; /* the main program has no name here: the runner */
	snprintf(o->name, sizeof o->name, "%s", base);
	if (o->hi > o->lo)
		nobjs++;
	return 0;
}

/* The shared regions IN and OUT as mapped here (fault_data_regions). */
static uintptr_t data_base[2], data_len[2];

/* The name of the object holding address a, or "?". */
static const char *obj_of(uintptr_t a)
{
	for (int i = 0; i < nobjs; i++)
		if (a >= objs[i].lo && a < objs[i].hi)
			return objs[i].name;
	return "?";
}

/* Appends " NAME" to the NUL-terminated msg of `cap` bytes (async-signal-safe). */
static void add_name(char *msg, size_t cap, const char *name)
{
	size_t n = strlen(msg);
	if (n + 1 >= cap)
		return;
	msg[n++] = ' ';
	for (; *name && n + 1 < cap; name++)
		msg[n++] = *name;
	msg[n] = 0;
}

/* dl_iterate_phdr callback: the span of the object loaded at art_base. */
static int find_span(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (info->dlpi_addr != art_base)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t lo = art_base + ph->p_vaddr, hi = lo + ph->p_memsz;
		if (!art_lo || lo < art_lo)
			art_lo = lo;
		if (hi > art_hi)
			art_hi = hi;
	}
	return 1;
}

/* The pc of the interrupted context, or 0. */
static uintptr_t context_pc(const void *ctx)
{
	const ucontext_t *uc = ctx;
#if defined(__x86_64__)
	return (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (uintptr_t)uc->uc_mcontext.pc;
#else
	(void)uc;
	return 0;
#endif
}

static int in_artifact(uintptr_t a)
{
	return a >= art_lo && a < art_hi;
}

int fault_artifact_offset(uintptr_t a, uint64_t *off)
{
	if (!art_lo || !in_artifact(a))
		return 0;
	*off = a - art_base;
	return 1;
}

/* Writes "0x" and v in hex into out (at least 19 bytes), NUL-terminated. */
static void hex(char *out, uint64_t v)
{
	char tmp[16];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*out++ = '0';
	*out++ = 'x';
	while (n)
		*out++ = tmp[--n];
	*out = 0;
}

void fault_reply_start(struct leap_run_reply *r, int sig, uint32_t call)
{
	memset(r, 0, sizeof *r);
	r->magic = LEAP_RUN_MAGIC;
	r->status = LEAP_RUN_CRASH;
	r->code = sig;
	r->call = call;
}

void fault_reply_end(const struct leap_run_reply *r, int sig)
{
	ssize_t w = write(LEAP_RUN_FD_REPLY, r, sizeof *r);
	(void)w; /* nothing to do about it: the wait status still tells the parent */
	raise(sig); /* blocked in the handler: delivered, with the default action, when it returns */
}

void fault_data_regions(const void *in, uint64_t in_len, const void *out, uint64_t out_len)
{
	data_base[0] = (uintptr_t)in;
	data_len[0] = in ? (uintptr_t)in_len : 0;
	data_base[1] = (uintptr_t)out;
	data_len[1] = out ? (uintptr_t)out_len : 0;
}

/* Appends " @0xOFF" to msg when the faulting data address of a SIGSEGV or SIGBUS lies in IN
 * or OUT (async-signal-safe). */
static void add_data_place(char *msg, size_t cap, int sig, const siginfo_t *si)
{
	if (!si || (sig != SIGSEGV && sig != SIGBUS))
		return;
	uintptr_t a = (uintptr_t)si->si_addr;
	for (int k = 0; k < 2; k++)
		if (data_len[k] && a >= data_base[k] && a - data_base[k] < data_len[k]) {
			char h[24] = "@";
			hex(h + 1, (uint64_t)(a - data_base[k]) + (k ? LEAP_RUN_OUT_BASE : 0));
			add_name(msg, cap, h);
			return;
		}
}

static void on_crash(int sig, siginfo_t *si, void *ctx)
{
	struct leap_run_reply r;
	fault_reply_start(&r, sig, 2);
	uintptr_t pc = context_pc(ctx);
	if (pc && in_artifact(pc)) {
		r.call = 0;
		hex(r.msg, pc - art_base);
	} else {
		/* a library function the candidate called: the first return address in the
		 * artifact, minus one so that it names the call, not the next line */
		void *frames[64];
		int n = backtrace(frames, 64);
		for (int i = 0; i < n; i++) {
			uintptr_t a = (uintptr_t)frames[i];
			if (a != pc && in_artifact(a)) {
				r.call = 1;
				hex(r.msg, a - 1 - art_base);
				break;
			}
		}
		if (r.call == 2) {
			r.msg[0] = '-';
			r.msg[1] = 0;
		}
		add_name(r.msg, sizeof r.msg, pc ? obj_of(pc) : "?");
	}
	add_data_place(r.msg, sizeof r.msg, sig, si);
	fault_reply_end(&r, sig);
}

void fault_report_init(void *handle)
{
	struct link_map *lm = NULL;
	if (dlinfo(handle, RTLD_DI_LINKMAP, &lm) || !lm)
		return;
	art_base = lm->l_addr;
	dl_iterate_phdr(find_span, NULL);
	if (!art_lo)
		return;
	dl_iterate_phdr(note_obj, NULL);
	void *warm[2];
	backtrace(warm, 2); /* loads the unwinder now, not in the handler */
	void *stack = mmap(NULL, ALT_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack != MAP_FAILED) {
		stack_t ss = {.ss_sp = stack, .ss_size = ALT_STACK, .ss_flags = 0};
		sigaltstack(&ss, NULL);
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	static const int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT};
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
}
