/* fuzz-sandbox-json.c: sandbox_policy_from_json on arbitrary bytes (the
 * sessions.sandbox_json column); it must never crash or leak, must leave the
 * policy untouched on failure, and what it accepts must hold the promises of
 * sandbox.h and survive a round trip unchanged. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "fuzz-sandbox-json: %s:%d: broken: %s\n", __FILE__, \
				__LINE__, #cond);                                      \
			abort();                                                       \
		}                                                                      \
	} while (0)

static const unsigned known = HQT_BIND_RW | HQT_BIND_SEED | HQT_BIND_PROTECT;

/* A project name: relative, every part a real name (no "", ".", ".."). */
static int
inside(const char *s)
{
	if (*s == '\0' || *s == '/')
		return 0;
	while (*s != '\0') {
		size_t n = strcspn(s, "/");
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return 0;
		s += n;
		if (*s == '/')
			s++;
	}
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sandbox_policy p, q;
	char *err = NULL, *json, *again;

	sandbox_policy_init(&p);
	sandbox_policy_add_bind(&p, "/sentinel", HQT_BIND_RO);
	if (sandbox_policy_from_json(&p, (const char *)data, size, &err) < 0) {
		CHECK(err != NULL && strncmp(err, "sandbox policy: ", 16) == 0);
		CHECK(strchr(err, '\n') == NULL);
		CHECK(p.nbinds == 1 && strcmp(p.binds[0].path, "/sentinel") == 0);
		free(err);
		sandbox_policy_free(&p);
		return 0;
	}
	CHECK(p.nbinds <= SANDBOX_MAX_BINDS && p.env_names.n <= SANDBOX_MAX_ENV);
	for (size_t i = 0; i < p.nbinds; i++) {
		if (p.binds[i].flags & HQT_BIND_PROJECT) {
			CHECK(p.binds[i].flags == (HQT_BIND_PROJECT | HQT_BIND_PROTECT));
			CHECK(inside(p.binds[i].path));
		} else {
			CHECK(p.binds[i].path[0] == '/');
			CHECK((p.binds[i].flags & ~known) == 0);
		}
	}
	for (size_t i = 0; i < p.env_names.n; i++)
		CHECK(p.env_names.v[i][0] != '\0' && strpbrk(p.env_names.v[i], "= \n") == NULL);

	json = sandbox_policy_to_json(&p, &err);
	CHECK(json != NULL);
	sandbox_policy_init(&q);
	CHECK(sandbox_policy_from_json(&q, json, strlen(json), &err) == 0);
	again = sandbox_policy_to_json(&q, &err);
	CHECK(again != NULL && strcmp(json, again) == 0);
	free(again);
	free(json);
	free(err);
	sandbox_policy_free(&q);
	sandbox_policy_free(&p);
	return 0;
}
