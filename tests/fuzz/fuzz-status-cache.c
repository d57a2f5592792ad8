/* fuzz-status-cache.c: status_cache_parse on arbitrary bytes; it must never
 * crash or leak, refuse whole (nothing kept) or keep only entries that are
 * well formed, and what it keeps must read back the same once written. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "status-cache.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                   \
	do {                                                                          \
		if (!(cond)) {                                                        \
			fprintf(stderr, "fuzz-status-cache: %s:%d: broken: %s\n",      \
				__FILE__, __LINE__, #cond);                           \
			abort();                                                      \
		}                                                                     \
	} while (0)

static void
check_entry(const struct status_cache_entry *e)
{
	size_t n = strlen(e->seen.pane_id);

	CHECK(e->id > 0);
	CHECK(n >= 2 && e->seen.pane_id[0] == '%' &&
	      strspn(e->seen.pane_id + 1, "0123456789") == n - 1);
	CHECK(e->seen.pid > 0 && e->seen.activity >= 0 && e->seen.at >= 0);
	CHECK(e->status >= HQT_STATUS_UNKNOWN && e->status <= HQT_STATUS_NEEDS_INPUT);
	CHECK(e->seen.want == TMUX_WANT_CHANGED && !e->kept);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct status_cache c = { 0 }, d = { 0 };
	char *text;
	size_t len;

	if (status_cache_parse(&c, (const char *)data, size) != 0) {
		CHECK(c.n == 0);
		status_cache_free(&c);
		return 0;
	}
	for (size_t i = 0; i < c.n; i++) {
		check_entry(&c.v[i]);
		CHECK(i == 0 || c.v[i - 1].id < c.v[i].id);
		CHECK(status_cache_find(&c, c.v[i].id, c.v[i].gen) == &c.v[i]);
		c.v[i].kept = true;
	}
	text = status_cache_format(&c, &len);
	CHECK(status_cache_parse(&d, text, len) == 0 && d.n == c.n);
	for (size_t i = 0; i < d.n; i++) {
		const struct status_cache_entry *a = &c.v[i], *b = &d.v[i];

		CHECK(a->id == b->id && a->gen == b->gen && a->status == b->status);
		CHECK(strcmp(a->seen.pane_id, b->seen.pane_id) == 0 && a->seen.pid == b->seen.pid);
		CHECK(a->seen.width == b->seen.width && a->seen.height == b->seen.height);
		CHECK(a->seen.activity == b->seen.activity && a->seen.at == b->seen.at);
	}
	free(text);
	status_cache_free(&c);
	status_cache_free(&d);
	return 0;
}
