/* crash.c - where a candidate failed at run time: a code address mapped to its source line,
 * the kernels of a CUDA artifact.
 *
 * "crashed with SIGSEGV in case 1" tells the model that something is wrong, not where. The
 * runner reports the faulting address as an offset into the artifact (runner/run.c); the
 * artifact carries DWARF line tables (cpu builds use -g1), and elfutils' libdwfl turns the
 * offset into the candidate's line: DWARF line programs, inlining and split sections are
 * not something to parse by hand. The report comes from the candidate's own process, so it
 * may be forged: it only ever names a line in a message, and a forged one misleads nobody
 * but the forger. On cuda a device fault carries no address; naming the kernels the
 * artifact defines (one, usually) is the most that can be said without a debugger. */
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "crash.h"
#include "core/util.h"
#include "core/banned.h"

static const Dwfl_Callbacks offline_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

long leap_crash_line(const char *artifact, uint64_t offset, const char *cand, char **func)
{
	*func = NULL;
	Dwfl *dwfl = dwfl_begin(&offline_callbacks);
	if (!dwfl)
		return 0;
	long line = 0;
	Dwfl_Module *m = dwfl_report_offline(dwfl, "artifact", artifact, -1);
	if (m && dwfl_report_end(dwfl, NULL, NULL) == 0) {
		Dwarf_Addr start = 0;
		dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
		Dwarf_Addr addr = start + offset;
		Dwfl_Line *l = dwfl_module_getsrc(m, addr);
		int lno = 0;
		const char *file = l ? dwfl_lineinfo(l, NULL, &lno, NULL, NULL, NULL) : NULL;
		const char *base = file ? strrchr(file, '/') : NULL;
		base = base ? base + 1 : file;
		if (base && lno > 0 && !strcmp(base, cand)) {
			line = lno;
			const char *fn = dwfl_module_addrname(m, addr);
			*func = fn ? xstrdup(fn) : NULL;
		}
	}
	dwfl_end(dwfl);
	return line;
}

/* Appends the readable name of the C++ mangled name m (after "_Z": "11copy_kernelPKfPfi",
 * "N2ns2tkILi3EEEvPf") to b: its identifiers joined by "::", template arguments shown as
 * "<...>". Returns 0, or -1 (b unchanged in meaning: the caller drops it) when m is not of
 * that simple form. */
static int demangle_name(struct leap_buf *b, const char *m)
{
	int nested = *m == 'N', parts = 0;
	if (nested)
		m++;
	while (*m == 'L' || *m == 'K' || *m == 'V' || *m == 'r')
		m++; /* internal linkage, cv-qualifiers of a member */
	for (;;) {
		if (*m < '0' || *m > '9')
			return parts ? 0 : -1;
		char *end;
		long len = strtol(m, &end, 10);
		if (len <= 0 || (long)strnlen(end, (size_t)len) < len)
			return -1;
		if (parts++)
			leap_buf_adds(b, "::");
		leap_buf_add(b, end, (size_t)len);
		m = end + len;
		if (*m == 'I') {
			leap_buf_adds(b, "<...>");
			return 0; /* the arguments are not needed to find the kernel */
		}
		if (!nested || *m == 'E')
			return 0;
		while (*m == 'L')
			m++;
	}
}

/* Adds the kernel named in symbol `sym` (one that contains "__device_stub__") to `names`
 * ("\nname\n" lines, starting with "\n") unless it is there already. */
static void add_kernel(struct leap_buf *names, const char *sym)
{
	const char *p = strstr(sym, "__device_stub__");
	const char *d = p; /* the length of the stub's identifier precedes it */
	while (d > sym && d[-1] >= '0' && d[-1] <= '9')
		d--;
	long len = d < p ? strtol(d, NULL, 10) : (long)strlen(p);
	if (len <= 15 || (long)strnlen(p, (size_t)len) < len)
		return;
	char *ident = xstrndup(p + 15, (size_t)len - 15);
	struct leap_buf name = {0};
	leap_buf_add(&name, "\n", 1);
	if (ident[0] != 'Z')
		leap_buf_adds(&name, ident); /* extern "C" */
	else if (demangle_name(&name, ident + 1))
		name.len = 1;
	free(ident);
	leap_buf_add(&name, "\n", 1);
	leap_buf_add(&name, "", 0);
	if (name.len > 2 && !strstr(names->s, name.s))
		leap_buf_add(names, name.s + 1, name.len - 1);
	leap_buf_free(&name);
}

char *leap_artifact_kernels(const char *artifact, int *n)
{
	*n = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	int fd = open(artifact, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	struct leap_buf names = {0};
	leap_buf_add(&names, "\n", 1);
	Elf_Scn *scn = NULL;
	while (e && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		size_t count = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; data && i < count; i++) {
			GElf_Sym sym;
			const char *s = gelf_getsym(data, (int)i, &sym) ? elf_strptr(e, sh.sh_link, sym.st_name) : NULL;
			if (s && strstr(s, "__device_stub__"))
				add_kernel(&names, s);
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	if (names.len <= 1) {
		leap_buf_free(&names);
		return NULL;
	}
	/* "\na\nb\n" -> "a, b" */
	struct leap_buf out = {0};
	for (const char *p = names.s + 1; *p;) {
		size_t k = strcspn(p, "\n");
		if (out.len)
			leap_buf_adds(&out, ", ");
		leap_buf_add(&out, p, k);
		(*n)++;
		p += k + (p[k] == '\n');
	}
	leap_buf_free(&names);
	leap_buf_add(&out, "", 0);
	return leap_buf_detach(&out);
}
