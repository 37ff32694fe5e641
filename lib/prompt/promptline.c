/* promptline.c - the prompt's sentences that the backends' own sections share. */
/*
 * A backend writes its prompt's machine section itself (backend.h, prompt_machine), and every
 * backend's says how the code is built in the same words: those words live here, below the
 * rows, so that a row calls down into them and never up into prompt.c, which calls the rows
 * (tests/house.bats: no circle of calls). They take the row itself, not its index, for the
 * same reason: the table's lookup is above them.
 */
#include <stdlib.h>
#include <string.h>

#include "prompt.h"
#include "core/util.h"
#include "core/banned.h"

int leap_prompt_has_half(const struct leap_task *t)
{
	for (size_t i = 0; i < t->nparams; i++) {
		const struct leap_param *p = &t->params[i];
		if (p->role != LEAP_ROLE_SCALAR && (p->type == LEAP_T_HALF || p->type == LEAP_T_BF16))
			return 1;
	}
	return 0;
}

void leap_prompt_build(struct leap_buf *s, const struct leap_prompt_machine *m, const struct leap_backend_ops *be,
		       const char *arch)
{
	if (!m || !m->have_tc)
		return;
	leap_buf_addf(s, "It is compiled as one translation unit with %s: `%s ", m->tc.version, be->compiler);
	/* the flags, with the architecture the device facts name, or ARCH */
	char *had = m->tc.arch && be->arch_flag ? be->arch_flag(m->tc.arch) : NULL;
	const char *f = m->tc.flags, *a = had ? strstr(f, had) : NULL;
	int unknown = be->prompt_arch_rule && !arch;
	if (a && (unknown || strcmp(arch, m->tc.arch))) {
		char *want = unknown ? xstrdup("ARCH") : be->arch_flag(arch);
		leap_buf_add(s, f, (size_t)(a - f));
		leap_buf_adds(s, want);
		leap_buf_adds(s, a + strlen(had));
		free(want);
	} else {
		leap_buf_adds(s, f);
	}
	free(had);
	leap_buf_adds(s, "`, ");
	if (unknown && a) {
		be->prompt_arch_rule(s);
		leap_buf_adds(s, ", ");
	}
	leap_buf_adds(s, "with the prototype above ");
}
